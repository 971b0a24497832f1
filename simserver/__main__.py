"""``python -m simserver``: same as the ``simserver`` console script."""

from simserver.cli import main

if __name__ == "__main__":
    main()
