"""A small inventory tool: the bundled example for `crosscheck analyze`.

It has branches, loops, exceptions, classes and a SQL query built from user input
(a taint flow from input() to cursor.execute()).
"""

import sqlite3
import sys


class Item:
    def __init__(self, name, qty, price):
        self.name = name
        self.qty = qty
        self.price = price

    def value(self):
        return self.qty * self.price


class Report:
    def __init__(self, items):
        self.items = items

    def total(self):
        total = 0
        for item in self.items:
            if item.qty < 0:
                continue
            total += item.value()
        return total

    def render(self):
        lines = []
        for item in self.items:
            lines.append(f"{item.name}: {item.qty}")
        lines.append(f"total: {self.total()}")
        return "\n".join(lines)


def open_db(path):
    try:
        conn = sqlite3.connect(path)
    except sqlite3.Error as exc:
        print("cannot open", path, exc, file=sys.stderr)
        raise
    return conn


def lookup(conn, name):
    cur = conn.cursor()
    query = "SELECT name, qty, price FROM items WHERE name = '" + name + "'"
    cur.execute(query)
    row = cur.fetchone()
    if row is None:
        return None
    return Item(row[0], row[1], row[2])


def safe_lookup(conn, name):
    cur = conn.cursor()
    cur.execute("SELECT name, qty, price FROM items WHERE name = ?", (name,))
    row = cur.fetchone()
    return Item(*row) if row else None


def main():
    conn = open_db("inventory.db")
    items = []
    while True:
        who = input("item (empty to stop): ")
        if not who:
            break
        item = lookup(conn, who)
        if item is not None:
            items.append(item)
    print(Report(items).render())


if __name__ == "__main__":
    main()
