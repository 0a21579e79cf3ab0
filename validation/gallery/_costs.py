"""What each figure costs, measured: quick, seconds of each figure in a fresh-clone ``make run`` on a quiet 2-core AMD
EPYC (two figures at a time; fig1 then ran alone on both cores before them; 2026-12-07, commit a6c210c).
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
    'fig1': (184.7, 672.0),   # full: --store --workers 2
    'fig2': (47.7, 249.5),   # full: --store --workers 2
    'phase': (55.7, 51.1),   # full: --store --workers 2
    'fig3': (48.0, 440.2),   # full: --store --workers 2
    'factorized_gap': (35.5, 93.5),   # full: --store --workers 2
    'fig6': (13.2, 74.0),
    'fig5': (21.7, 181.6),   # full: --store --workers 2 (a Dask LocalCluster)
    'nonlinear_errors': (16.3, 81.5),
    'fig4': (8.5, 33.8),
    'nonlinear_boundary': (18.3, 130.8),   # full: --store --workers 2
    'learners_scaling': (121.6, 1396.8),   # full: --store --workers 2 (a Dask LocalCluster)
    'learners': (99.7, 267.3),   # full: --store --workers 2
    'staged': (6.5, 142.8),
    'saddles': (14.2, 53.8),
    'rank_dynamics': (4.1, 28.2),
    'learners_pools': (51.6, 1153.1),   # full: --store --workers 2
    'pools_gtask': (18.6, 363.6),
    'pools_double_descent': (18.1, 1076.3),   # full: --store --workers 2, in two runs (764.5 + 311.8 s)
    'pools_phase': (3.7, 20.7),
    'markov_minimal': (10.6, 78.1),
    'markov_bottleneck': (13.2, 115.0),
    'markov_estimators': (20.0, 171.8),
    'structured_tasks': (6.5, None),
    'pools_finite_d': (19.6, 503.5),
}
