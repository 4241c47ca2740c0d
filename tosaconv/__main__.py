"""``python -m tosaconv``: the same command line as the ``tosaconv`` console script."""
from tosaconv.cli import main

if __name__ == "__main__":
    main()
