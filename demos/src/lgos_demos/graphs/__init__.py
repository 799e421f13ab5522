"""The demo graphs, one module each; ``lgos_demos.registry`` serves them."""
