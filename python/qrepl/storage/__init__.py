"""Storage: the Spark session, the publisher's Iceberg tables, the replicas, the run lock and
dbt invocations. Imports only the core."""
