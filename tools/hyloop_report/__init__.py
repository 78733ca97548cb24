"""Plots for hyloop run directories: the package behind tools/report.py.

Modules: io (reading a run directory), plotting (decimation, units, axes helpers), panels (one
function per panel), roles (which figures the roles of a run's signals call for), figures
(figure assembly for one run), compare (several runs overlaid), metrics (metrics.md), cli (the
command line).
"""
