"""What each figure costs, measured: seconds of each figure in a fresh-clone ``make run`` (quick settings, 2-core
AMD EPYC, two figures at a time beside the validation report, so an upper bound of a figure run alone; fig1 ran
alone on both cores; 2026-12-06, commit 64985fe). ``figures/manifest.json`` records the seconds of every figure a
run makes; ``benchmarks/figure_costs.py`` measures one figure at a time. Full-mode costs are not measured yet
(``None``): a full run takes ``--store DIR --workers N`` to spread its points and to resume.
``linattn figures --list`` shows these beside each figure's number of points.
"""

#: figure name -> (quick seconds, full seconds or None)
COSTS: dict[str, tuple] = {
    'fig1': (128.7, None),
    'fig2': (47.1, None),
    'phase': (67.2, None),
    'fig3': (45.6, None),
    'factorized_gap': (30.6, None),
    'fig6': (13.7, None),
    'fig5': (25.7, None),
    'nonlinear_errors': (23.8, None),
    'fig4': (5.0, None),
    'nonlinear_boundary': (26.2, None),
    'learners_scaling': (129.9, None),   # re-measured after its (N, N_test) planes: make run of 266b957
    'learners': (152.1, None),
    'staged': (6.3, None),
    'saddles': (11.7, None),
    'rank_dynamics': (4.2, None),
    'learners_pools': (80.3, None),
    'pools_gtask': (29.5, None),
    'pools_double_descent': (38.0, None),
    'pools_phase': (2.1, None),
    'markov_minimal': (4.8, None),
    'markov_bottleneck': (10.7, None),
    'markov_estimators': (9.1, None),
    'pools_finite_d': (29.5, None),
}
