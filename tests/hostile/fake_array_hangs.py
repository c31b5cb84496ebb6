"""Returns an object whose __repr__ (and __array__, __float__) never returns."""


class Tarpit:
    def __repr__(self):
        while True:
            pass

    __str__ = __repr__

    def __float__(self):
        while True:
            pass

    def __array__(self, *args, **kwargs):
        while True:
            pass


def replicated_sharding_value(x):
    return Tarpit()
