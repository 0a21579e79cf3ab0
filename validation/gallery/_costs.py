"""What each figure costs, measured: seconds of each figure in a fresh-clone ``make run`` (quick settings, 2-core
AMD EPYC, two figures at a time beside the validation report, so an upper bound of a figure run alone; fig1 ran
alone on both cores; 2026-12-06, commit 64985fe). ``figures/manifest.json`` records the seconds of every figure a
run makes; ``benchmarks/figure_costs.py`` measures one figure at a time. Full-mode costs: ``benchmarks/figure_costs.py
full NAME`` (one process) or ``linattn figures NAME --full --store DIR --workers 2`` (a Dask LocalCluster of 2
workers; marked below), beside another job on the same 2 cores, so upper bounds (2026-12-06, 2-core AMD EPYC; fig1,
fig2, fig3, learners, learners_pools and pools_double_descent 2026-12-07, same machine, beside a one-core
hostile-input harness). A figure not in the table (the torch figures) shows ``—``.
``linattn figures --list`` shows these beside each figure's number of points.
"""

#: figure name -> (quick seconds, full seconds)
COSTS: dict[str, tuple] = {
    'fig1': (128.7, 672.0),   # full: --store --workers 2
    'fig2': (47.1, 249.5),   # full: --store --workers 2
    'phase': (67.2, 51.1),   # full: --store --workers 2
    'fig3': (45.6, 440.2),   # full: --store --workers 2
    'factorized_gap': (30.6, 93.5),   # full: --store --workers 2
    'fig6': (13.7, 74.0),
    'fig5': (25.7, 181.6),   # full: --store --workers 2 (a Dask LocalCluster)
    'nonlinear_errors': (23.8, 81.5),
    'fig4': (5.0, 33.8),
    'nonlinear_boundary': (26.2, 130.8),   # full: --store --workers 2
    'learners_scaling': (129.9, 1396.8),   # quick: make run of 266b957; full: --store --workers 2 (a Dask LocalCluster)
    'learners': (152.1, 267.3),   # full: --store --workers 2
    'staged': (6.3, 142.8),
    'saddles': (11.7, 53.8),
    'rank_dynamics': (4.2, 28.2),
    'learners_pools': (80.3, 1153.1),   # full: --store --workers 2
    'pools_gtask': (29.5, 363.6),
    'pools_double_descent': (38.0, 1076.3),   # full: --store --workers 2, in two runs (764.5 + 311.8 s)
    'pools_phase': (2.1, 20.7),
    'markov_minimal': (4.8, 78.1),
    'markov_bottleneck': (10.7, 115.0),
    'markov_estimators': (9.1, 171.8),
    'pools_finite_d': (29.5, 503.5),
}
