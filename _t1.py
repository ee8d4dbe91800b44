import time, numpy as np
from problems import make_problem
from ratecheck.algorithms import make_algorithm
from ratecheck.engine import run
p = make_problem("least_squares", {})
for R in (1000, 3000):
    alg = make_algorithm("strfedavg", {"horizon": R, "local_steps": 5, "participation": "full"})
    t0=time.time(); tr = run(alg, p, R, replicas=16); dt=time.time()-t0
    par = alg.parameters(p)
    c = p.constants()
    print(R, dt, par, tr.measures["f_gap"][-1][:2], -c["c_f"].value*par["eta"], tr.measures["h_gap"][-1][0], c["c_f"].value*par["eta"]**2/2)
