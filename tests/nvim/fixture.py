def total(xs):
    t = 0
    for x in xs:
        if x > 0:
            t += x
    return t


def broken(:
    pass
