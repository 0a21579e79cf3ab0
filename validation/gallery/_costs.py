"""What each figure costs, measured: quick, seconds of each figure in a fresh-clone ``make run`` on a quiet 2-core AMD
EPYC (two single-threaded figures at a time, the longest first; 2026-12-07, commit 38044cb).
``figures/manifest.json`` records the seconds of every figure a run makes; ``benchmarks/figure_costs.py`` measures
one figure at a time. Full-mode costs: ``benchmarks/figure_costs.py full NAME`` (one process) or
``linattn figures NAME --full --store DIR --workers 2`` (a Dask LocalCluster of 2 workers; marked below), beside
another job on the same 2 cores, so upper bounds (2026-12-06, 2-core AMD EPYC; fig1, fig2, fig3, learners,
learners_pools and pools_double_descent 2026-12-07, same machine, beside a one-core hostile-input harness). A figure
not in the table (the torch figures) or a cost not measured shows ``—``. ``linattn figures --list`` shows these
beside each figure's number of points; ``make(..., jobs > 1)`` starts figures in the order of their quick cost.
"""

#: figure name -> (quick seconds, full seconds)
COSTS: dict[str, tuple] = {
    'fig1': (211.1, 672.0),   # full: --store --workers 2
    'fig2': (36.9, 249.5),   # full: --store --workers 2
    'phase': (47.4, 51.1),   # full: --store --workers 2
    'fig3': (42.4, 440.2),   # full: --store --workers 2
    'factorized_gap': (26.3, 93.5),   # full: --store --workers 2
    'fig6': (10.0, 74.0),
    'fig5': (17.6, 181.6),   # full: --store --workers 2 (a Dask LocalCluster)
    'nonlinear_errors': (10.3, 81.5),
    'fig4': (7.3, 33.8),
    'nonlinear_boundary': (22.0, 130.8),   # full: --store --workers 2
    'learners_scaling': (84.5, 1396.8),   # full: --store --workers 2 (a Dask LocalCluster)
    'learners': (38.2, 267.3),   # full: --store --workers 2
    'staged': (5.9, 142.8),
    'saddles': (11.3, 53.8),
    'rank_dynamics': (3.3, 28.2),
    'learners_pools': (42.8, 1153.1),   # full: --store --workers 2
    'pools_gtask': (17.0, 363.6),
    'pools_double_descent': (13.4, 1076.3),   # full: --store --workers 2, in two runs (764.5 + 311.8 s)
    'pools_phase': (2.9, 20.7),
    'markov_minimal': (8.0, 78.1),
    'markov_bottleneck': (10.7, 115.0),
    'markov_estimators': (18.7, 171.8),
    'structured_tasks': (5.8, None),
    'pools_finite_d': (17.5, 503.5),
}
