"""What each figure costs, measured: seconds of each figure in a fresh-clone ``make run`` (quick settings, 2-core
AMD EPYC, two figures at a time beside the validation report, so an upper bound of a figure run alone; fig1 ran
alone on both cores; 2026-12-06, commit 5d79a37). ``figures/manifest.json`` records the seconds of every figure a
run makes; ``benchmarks/figure_costs.py`` measures one figure at a time. Full-mode costs are not measured yet
(``None``): a full run takes ``--store DIR --workers N`` to spread its points and to resume.
``linattn figures --list`` shows these beside each figure's number of points.
"""

#: figure name -> (quick seconds, full seconds or None)
COSTS: dict[str, tuple] = {
    'fig1': (125.4, None),
    'fig2': (41.9, None),
    'phase': (60.4, None),
    'fig3': (43.0, None),
    'factorized_gap': (30.6, None),
    'fig6': (12.6, None),
    'fig5': (22.9, None),
    'nonlinear_errors': (18.5, None),
    'fig4': (4.7, None),
    'nonlinear_boundary': (27.5, None),
    'learners_scaling': (28.1, None),
    'learners': (104.9, None),
    'staged': (7.1, None),
    'saddles': (11.1, None),
    'rank_dynamics': (3.5, None),
    'learners_pools': (50.6, None),
    'pools_gtask': (35.5, None),
    'pools_double_descent': (59.9, None),
    'pools_phase': (1.9, None),
    'markov_minimal': (3.9, None),
    'markov_bottleneck': (8.2, None),
    'markov_estimators': (6.9, None),
    'pools_finite_d': (40.2, None),
}
