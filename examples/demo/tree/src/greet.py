"""Greetings for the command line."""

import sys


def greet(name):
    return "Hello, " + name


def farewell(name):
    return "Goodbye, " + name


def main():
    name = sys.argv[1] if len(sys.argv) > 1 else "world"
    print(greet(name))


if __name__ == "__main__":
    main()
