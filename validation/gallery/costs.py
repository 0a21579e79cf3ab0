"""What each figure costs, measured: seconds of ``linattn figures NAME --quick`` and ``--full`` on the 2-core
AMD EPYC machine of this repository, one figure at a time in a fresh process on an otherwise idle machine
(``benchmarks/figure_costs.py`` prints this table; ``figures/manifest.json`` records the seconds of every figure a
run makes). ``None``: not measured. ``linattn figures --list`` shows them beside each figure's number of points.
"""

#: figure name -> (quick seconds, full seconds or None)
COSTS: dict[str, tuple] = {}
