import cProfile, pstats
from problems import make_problem
from ratecheck.algorithms import make_algorithm
from ratecheck.engine import run
p = make_problem("least_squares", {})
alg = make_algorithm("strfedavg", {"horizon": 800, "local_steps": 2, "participation": "full"})
cProfile.run("run(alg, p, 800, replicas=16)", "/tmp/sf.prof")
pstats.Stats("/tmp/sf.prof").sort_stats("tottime").print_stats(14)
