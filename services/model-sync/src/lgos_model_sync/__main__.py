"""``python -m lgos_model_sync``: the same as the ``lgos-model-sync`` command."""

from lgos_model_sync.cli import main

if __name__ == "__main__":
    main()
