"""A tiny calculator with one planted bug (add subtracts), for the task-loop recipe."""


def add(a, b):
    return a - b


def double(x):
    return x * 2
