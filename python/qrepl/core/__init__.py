"""The pure core: the data model and the sequential reference reader (the executable
specification). Plain Python, no Spark."""
