"""The estate audit on Spark: read -> transform -> write, the report and the run summary.

Importing this package is cheap: PySpark loads inside the modules that need it.
"""
