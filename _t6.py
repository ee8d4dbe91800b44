import numpy as np, math
from problems import make_problem
from ratecheck.algorithms import make_algorithm
from ratecheck.engine import run
from proofs.strfedavg import theorems as th
from proofs.strfedavg.claims import TP3
p = make_problem("least_squares", TP3)
c = {k: v.value for k, v in p.constants().items()}
for T in (10, 20, 40):
    alg = make_algorithm("ipir_fedavg", {"R0": 50, "participation": "full"})
    tr = run(alg, p, T, replicas=2)
    sup = tr.info["sup_dist_y"]
    vals = dict(L_f=c["L_f"], L_h=c["L_h"], sigma_h=0.0, Gncvx2=2*sup**2 + 2*c["G_h2"], M=0.5*sup**2, alpha=c["alpha"], kappa=2.0,
                gradg_star=sup, F0_minus_Fstar=float(p.smoothed_value(p.x0) - p.smoothed_value(p.y_stat)), D0=sup**2, eta_hat=24/(5*math.e), N=2.0,
                T=float(T), K=1.0, S=2.0, gamma_g=1.0, **{"lambda": 0.25}, gamma=alg.resolved_gamma(p))
    ev = th.THEOREM_3.evaluate(vals, use_schedule=False)
    print(T, tr.measures["avg:stat_sq"][-1][0], ev.bounds, [ (x.name, x.holds) for x in ev.conditions])
