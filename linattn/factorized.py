"""linattn.factorized — factorized parametrizations of the same linear-attention predictor and their objectives.

A :class:`Parametrization` (``"merged"``, ``"value_kq"``, ``"value_kq_modes"``, ``"separate_kq"``; :data:`KINDS`)
maps its parameters ``θ`` to the merged ``Γ(θ)``, so every loss is the quadratic :class:`Objective` of ``Γ`` —
of one dataset (:func:`dataset_objective`) or of the population (:func:`population_objective`) — composed with a
polynomial map. Mainali & Teixeira; Zhang, Singh, Latham & Saxe. See the factorized-attention page
(``docs/factorized.md``).
"""
from ._parametrizations import KINDS, Objective, Parametrization, dataset_objective, population_objective

__all__ = ["Parametrization", "Objective", "dataset_objective", "population_objective", "KINDS"]
