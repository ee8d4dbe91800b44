"""Algorithm families, one module each; importing this package registers them all."""

from . import fedavg  # noqa: F401  (registers fedavg, defedavg_niid, defedavg_iid)
from . import bilevel  # noqa: F401  (registers simfbo, shrofbo, soba and the bilevel baselines)
from . import bilevel_baselines  # noqa: F401  (registers fednest, lfednest, naive_hypergrad, fednova)
from . import minimax  # noqa: F401  (registers fess_gda, fsgda, local_sgda, sgda)
from . import strfedavg  # noqa: F401  (registers strfedavg, tikhonov_fedavg, scaffold, ipir_fedavg, ir_sgd, ...)
from .base import REGISTRY, Algorithm, make_algorithm, register

__all__ = ["REGISTRY", "Algorithm", "make_algorithm", "register"]
