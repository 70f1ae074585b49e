"""Services: each does one job on a publication, named by its schema, and returns data.
Imports storage and the core."""
