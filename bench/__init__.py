"""Benchmarks: each prints its figures next to a baseline measured in the same run, and the ratio.

``python -m bench`` runs them all; ``python -m bench NAME...`` runs those whose module name
contains NAME. Add a benchmark by appending its module to ``BENCHMARKS`` in ``bench/__main__.py``;
it must run as ``python -m bench.<module>`` with no arguments.
"""
