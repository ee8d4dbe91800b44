import time, numpy as np, sys
from problems import make_problem
from ratecheck.algorithms import make_algorithm
from ratecheck.engine import run
for conv in ("half","paper"):
    p = make_problem("least_squares", {"outer": "tp3b", "mu": 2.0, "lam": 0.25, "lam_min": 5.0, "lam_max": 5.0, "dim": 8, "rank": 4, "clients": 2, "rows": 2, "c_scale": 1.0, "convention": conv})
    c=p.constants(); print(c["L_h"].value, np.linalg.norm(p.x0-p.y_stat), np.sqrt(p.dist_sq(p.y_stat)))
    for T in (20, 60):
        alg = make_algorithm("ipir_fedavg", {"R0": 50, "participation": "full"})
        t0=time.time(); tr = run(alg, p, T, replicas=16); dt=time.time()-t0
        print(conv, T, round(dt,2), tr.measures["y_dist_sq"][-1][0]**.5, tr.measures["avg:stat_sq"][-1][0], tr.measures["inner_err_sq"][-1][0]**.5)
    tr = run(make_algorithm("exact_projection_gd", {}), p, 60, replicas=2); print("exact", tr.measures["y_dist_sq"][-1][0]**.5)
