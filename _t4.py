import time, numpy as np, sys
from problems import make_problem
from ratecheck.algorithms import make_algorithm
from ratecheck.engine import run
lam, s = float(sys.argv[1]), float(sys.argv[2])
p = make_problem("least_squares", {"outer": "tp2a", "mu": s, "lam_min": lam, "lam_max": lam, "x0": "zero", "c_scale": float(sys.argv[3])})
c = p.constants(); print({k: round(float(v.value),4) for k,v in c.items()})
res=[]
Rs=(100,200,400,800,1600,3200)
for R in Rs:
    alg = make_algorithm("strfedavg", {"horizon": R, "local_steps": 1, "participation": "full", "schedule":"convex", "a":0.5, "b":0.25})
    tr = run(alg, p, R, replicas=2)
    res.append([abs(tr.measures["f_gap"][-1][0]), tr.measures["h_gap"][-1][0], np.sqrt(tr.measures["dist_sq"][-1][0])])
res=np.array(res); print(res)
for j in range(3): print(np.polyfit(np.log(Rs), np.log(res[:,j]),1)[0], np.diff(np.log(res[:,j]))/np.log(2))
