import time, numpy as np
from problems import make_problem
from ratecheck.algorithms import make_algorithm
from ratecheck.engine import run
p = make_problem("least_squares", {})
c = p.constants()
for R in (200, 800, 3200):
    alg = make_algorithm("strfedavg", {"horizon": R, "local_steps": 2, "participation": "full"})
    t0=time.time(); tr = run(alg, p, R, replicas=16); dt=time.time()-t0
    par = alg.parameters(p)
    xe = p.regularized_solution(par["eta"])
    fe = p.outer.value(xe) - p.f_star; he = p.h_gap(xe)
    print(R, round(dt,2), par["eta"], tr.measures["f_gap"][-1][0], fe, tr.measures["h_gap"][-1][0], he, tr.measures["dist_sq"][-1][0])
