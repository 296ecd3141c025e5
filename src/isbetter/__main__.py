"""Run the command line: ``python -m isbetter``."""

from isbetter.cli import program

if __name__ == "__main__":
    program()
