"""The research graph's nodes, one module each."""
