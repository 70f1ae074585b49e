"""Tools on top of the services: scenario replay, what-if, the demo, the Thrift check."""
