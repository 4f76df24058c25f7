"""TPC-C on PostgreSQL: the schema, a scaled-down population and the five transactions.

Written by this project from the TPC Benchmark C specification (Transaction Processing
Performance Council, revision 5.11, 2010): the nine tables of its clause 1.3, the
population of clause 4.3 and the transaction profiles of clauses 2.4-2.8 (New-Order,
Payment, Order-Status, Delivery, Stock-Level), each one database transaction in SQL
through psycopg.  Du, Zhang, Dong & Zhang (JPDC 2001, §4.1) ran TPC-C on POSTGRES with
the database "scaled down 100 times"; :class:`Scale` does the same to the per-warehouse
cardinalities (100,000 items become 1,000; 3,000 customers per district 30; the 900
undelivered orders per district 9), and scales the non-uniform random constants of
clause 2.1.6 with them.  What differs from a full TPC-C run, said once:

* Delivery runs at once in the terminal's own transaction (the specification allows it
  to be queued and run in the background; clause 2.7.2);
* with one warehouse every order line is supplied locally and every payment is by a
  home customer (clauses 2.4.1.5 and 2.5.1.2 need two warehouses for remote ones);
* no think or keying times here: the terminals of :mod:`calibration.sim.tpcc_recorder`
  issue transactions back to back (the queueing model adds the think times);
* 1% of New-Orders name an unused item and roll back (clause 2.4.1.4), as specified.

:func:`check_consistency` tests the specification's consistency conditions 1-4 (clause
3.3.2) and is what the tests run after a driver run.
"""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass

import numpy as np

from .pgserver import copy_rows

__all__ = ["Scale", "TABLES", "TRANSACTIONS", "SCHEMA", "create_schema", "load", "Terminal", "check_consistency",
           "table_counts"]

#: The nine tables in the paper's numbering (Du et al., Table 1: 1 Warehouse ... 9 History).
TABLES = ("warehouse", "district", "stock", "item", "customer", "orders", "new_order", "order_line", "history")
#: The five transactions in the paper's order (I-V) and the model's names.
TRANSACTIONS = ("new_order", "payment", "order_status", "delivery", "stock_level")

SCHEMA = """
CREATE TABLE warehouse (w_id int PRIMARY KEY, w_name varchar(10), w_street_1 varchar(20), w_street_2 varchar(20),
  w_city varchar(20), w_state char(2), w_zip char(9), w_tax numeric(4,4), w_ytd numeric(12,2));
CREATE TABLE district (d_id int, d_w_id int, d_name varchar(10), d_street_1 varchar(20), d_street_2 varchar(20),
  d_city varchar(20), d_state char(2), d_zip char(9), d_tax numeric(4,4), d_ytd numeric(12,2), d_next_o_id int,
  PRIMARY KEY (d_w_id, d_id));
CREATE TABLE stock (s_i_id int, s_w_id int, s_quantity int, s_dist_01 char(24), s_dist_02 char(24),
  s_dist_03 char(24), s_dist_04 char(24), s_dist_05 char(24), s_dist_06 char(24), s_dist_07 char(24),
  s_dist_08 char(24), s_dist_09 char(24), s_dist_10 char(24), s_ytd int, s_order_cnt int, s_remote_cnt int,
  s_data varchar(50), PRIMARY KEY (s_w_id, s_i_id));
CREATE TABLE item (i_id int PRIMARY KEY, i_im_id int, i_name varchar(24), i_price numeric(5,2), i_data varchar(50));
CREATE TABLE customer (c_id int, c_d_id int, c_w_id int, c_first varchar(16), c_middle char(2), c_last varchar(16),
  c_street_1 varchar(20), c_street_2 varchar(20), c_city varchar(20), c_state char(2), c_zip char(9),
  c_phone char(16), c_since timestamp, c_credit char(2), c_credit_lim numeric(12,2), c_discount numeric(4,4),
  c_balance numeric(12,2), c_ytd_payment numeric(12,2), c_payment_cnt int, c_delivery_cnt int, c_data varchar(500),
  PRIMARY KEY (c_w_id, c_d_id, c_id));
CREATE INDEX customer_name ON customer (c_w_id, c_d_id, c_last, c_first);
CREATE TABLE orders (o_id int, o_d_id int, o_w_id int, o_c_id int, o_entry_d timestamp, o_carrier_id int,
  o_ol_cnt int, o_all_local int, PRIMARY KEY (o_w_id, o_d_id, o_id));
CREATE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id);
CREATE TABLE new_order (no_o_id int, no_d_id int, no_w_id int, PRIMARY KEY (no_w_id, no_d_id, no_o_id));
CREATE TABLE order_line (ol_o_id int, ol_d_id int, ol_w_id int, ol_number int, ol_i_id int, ol_supply_w_id int,
  ol_delivery_d timestamp, ol_quantity int, ol_amount numeric(6,2), ol_dist_info char(24),
  PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number));
CREATE TABLE history (h_c_id int, h_c_d_id int, h_c_w_id int, h_d_id int, h_w_id int, h_date timestamp,
  h_amount numeric(6,2), h_data varchar(24));
"""

SYLLABLES = ("BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING")


@dataclass(frozen=True)
class Scale:
    """Cardinalities (clause 4.3: 100,000 items; per warehouse 10 districts, per district
    3,000 customers and orders, the last 900 orders new) divided by ``factor`` (the
    paper's 100), and the NURand constants A of clause 2.1.6 scaled with their ranges."""

    warehouses: int = 1
    factor: int = 100

    @property
    def items(self) -> int:
        return 100_000 // self.factor

    @property
    def districts(self) -> int:
        return 10

    @property
    def customers(self) -> int:
        """Per district."""
        return 3_000 // self.factor

    @property
    def new_orders(self) -> int:
        """Undelivered orders per district at load."""
        return 900 // self.factor

    def nurand_a(self, full_a: int, full_range: int, scaled_range: int) -> int:
        """A power of two minus one near ``full_a x scaled_range / full_range`` (at least 1)."""
        target = max(1.0, full_a * scaled_range / full_range)
        return int(2 ** round(np.log2(target + 1)) - 1)


def last_name(number: int) -> str:
    """C_LAST of clause 4.3.2.3: three syllables by the digits of ``number`` (0-999)."""
    return SYLLABLES[number // 100] + SYLLABLES[(number // 10) % 10] + SYLLABLES[number % 10]


class _Random:
    """The specification's random functions (clause 2.1.6, 4.3.2) on a numpy generator."""

    def __init__(self, seed: int, scale: Scale):
        self.rng = np.random.default_rng(seed)
        self.scale = scale
        # C is drawn once per run (clause 2.1.6.1)
        self.c = {name: int(self.rng.integers(0, a + 1)) for name, a in (("item", 8191), ("customer", 1023),
                                                                          ("last", 255))}
        self.a = {"item": scale.nurand_a(8191, 100_000, scale.items),
                  "customer": scale.nurand_a(1023, 3_000, scale.customers),
                  "last": scale.nurand_a(255, 1_000, scale.customers)}

    def uniform(self, lo: int, hi: int) -> int:
        return int(self.rng.integers(lo, hi + 1))

    def nurand(self, kind: str, lo: int, hi: int) -> int:
        a, c = self.a[kind], self.c[kind] % (hi - lo + 1)
        return (((self.uniform(0, a) | self.uniform(lo, hi)) + c) % (hi - lo + 1)) + lo

    def text(self, lo: int, hi: int) -> str:
        n = self.uniform(lo, hi)
        return "".join(chr(int(x)) for x in self.rng.integers(97, 123, n))

    def digits(self, n: int) -> str:
        return "".join(str(int(x)) for x in self.rng.integers(0, 10, n))

    def data(self, lo: int, hi: int) -> str:
        """I_DATA/S_DATA: 10% contain ORIGINAL (clause 4.3.3.1)."""
        s = self.text(lo, hi)
        if self.rng.random() < 0.1:
            at = self.uniform(0, len(s) - 8)
            s = s[:at] + "ORIGINAL" + s[at + 8:]
        return s


def create_schema(conn) -> None:
    """The nine tables, their primary keys and the two secondary indexes the transactions
    search by (customer by last name, orders by customer)."""
    with conn.cursor() as cur:
        cur.execute(SCHEMA)
    conn.commit()


def load(conn, scale: Scale, seed: int = 1) -> dict:
    """Populate the tables (clause 4.3.3.1) with COPY; returns rows per table."""
    r = _Random(seed, scale)
    now = _dt.datetime(2001, 1, 1)
    rows = {}

    def copy(table, records):
        rows[table] = rows.get(table, 0) + copy_rows(conn, table, records)

    copy("item", [(i, r.uniform(1, 10000), r.text(14, 24), r.uniform(100, 10000) / 100, r.data(26, 50))
                  for i in range(1, scale.items + 1)])
    for w in range(1, scale.warehouses + 1):
        copy("warehouse", [(w, r.text(6, 10), r.text(10, 20), r.text(10, 20), r.text(10, 20), r.text(2, 2),
                            r.digits(4) + "11111", r.uniform(0, 2000) / 10000, 300000.0)])
        copy("stock", [(i, w, r.uniform(10, 100), *(r.text(24, 24) for _ in range(10)), 0, 0, 0, r.data(26, 50))
                       for i in range(1, scale.items + 1)])
        for d in range(1, scale.districts + 1):
            n = scale.customers
            copy("district", [(d, w, r.text(6, 10), r.text(10, 20), r.text(10, 20), r.text(10, 20), r.text(2, 2),
                               r.digits(4) + "11111", r.uniform(0, 2000) / 10000, 30000.0, n + 1)])
            copy("customer", [(c, d, w, r.text(8, 16), "OE", last_name((c - 1) % 1000), r.text(10, 20),
                               r.text(10, 20), r.text(10, 20), r.text(2, 2), r.digits(4) + "11111", r.digits(16), now,
                               "BC" if r.rng.random() < 0.1 else "GC", 50000.0, r.uniform(0, 5000) / 10000, -10.0,
                               10.0, 1, 0, r.text(300, 500)) for c in range(1, n + 1)])
            copy("history", [(c, d, w, d, w, now, 10.0, r.text(12, 24)) for c in range(1, n + 1)])
            customers = r.rng.permutation(n) + 1
            orders, lines, new = [], [], []
            for o in range(1, n + 1):
                delivered = o <= n - scale.new_orders
                count = r.uniform(5, 15)
                orders.append((o, d, w, int(customers[o - 1]), now, r.uniform(1, 10) if delivered else None, count, 1))
                for number in range(1, count + 1):
                    lines.append((o, d, w, number, r.uniform(1, scale.items), w, now if delivered else None, 5,
                                  0.0 if delivered else r.uniform(1, 999999) / 100, r.text(24, 24)))
                if not delivered:
                    new.append((o, d, w))
            copy("orders", orders)
            copy("order_line", lines)
            copy("new_order", new)
    conn.commit()
    with conn.cursor() as cur:
        cur.execute("ANALYZE")
    conn.commit()
    return rows


class Terminal:
    """One emulated terminal on its own connection: :meth:`run` performs a transaction of
    the given type with inputs drawn as the specification says (clauses 2.4.1-2.8.1).
    Returns True if it committed (a New-Order with an unused item rolls back)."""

    def __init__(self, conn, scale: Scale, seed: int, warehouse: int = 1, district: int | None = None):
        self.conn = conn
        self.scale = scale
        self.r = _Random(seed, scale)
        self.w = warehouse
        self.d = district or self.r.uniform(1, scale.districts)    # Stock-Level's fixed district (2.8.1.1)

    def run(self, kind: str) -> bool:
        try:
            committed = getattr(self, kind)()
        except Exception:
            self.conn.rollback()
            raise
        if committed:
            self.conn.commit()
        else:
            self.conn.rollback()
        return committed

    # --- customer selection (clauses 2.5.1.2, 2.6.1.2) ---------------------------------

    def _customer(self, cur, d: int, columns: str):
        """60% by last name (the middle one of those with it, ordered by first name), 40% by id."""
        s = self.scale
        if self.r.uniform(1, 100) <= 60:
            name = last_name(self.r.nurand("last", 0, min(s.customers, 1000) - 1))
            cur.execute(f"SELECT c_id, {columns} FROM customer WHERE c_w_id = %s AND c_d_id = %s AND c_last = %s "
                        "ORDER BY c_first", (self.w, d, name))
            found = cur.fetchall()
            if found:
                return found[(len(found) + 1) // 2 - 1]
        c = self.r.nurand("customer", 1, s.customers)
        cur.execute(f"SELECT c_id, {columns} FROM customer WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s",
                    (self.w, d, c))
        return cur.fetchone()

    # --- the five transactions -----------------------------------------------------------

    def new_order(self) -> bool:
        """Clause 2.4.2."""
        s, r, w = self.scale, self.r, self.w
        d = r.uniform(1, s.districts)
        c = r.nurand("customer", 1, s.customers)
        count = r.uniform(5, 15)
        items = [r.nurand("item", 1, s.items) for _ in range(count)]
        if r.uniform(1, 100) == 1:
            items[-1] = s.items + 1                     # unused: the transaction rolls back (2.4.1.4)
        quantities = [r.uniform(1, 10) for _ in range(count)]
        with self.conn.cursor() as cur:
            cur.execute("SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse WHERE w_id = %s "
                        "AND c_w_id = w_id AND c_d_id = %s AND c_id = %s", (w, d, c))
            discount, _, _, w_tax = cur.fetchone()
            cur.execute("UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = %s AND d_id = %s "
                        "RETURNING d_next_o_id - 1, d_tax", (w, d))
            o, d_tax = cur.fetchone()
            cur.execute("INSERT INTO orders VALUES (%s, %s, %s, %s, now(), NULL, %s, 1)", (o, d, w, c, count))
            cur.execute("INSERT INTO new_order VALUES (%s, %s, %s)", (o, d, w))
            for number, (item, quantity) in enumerate(zip(items, quantities, strict=True), start=1):
                cur.execute("SELECT i_price, i_name, i_data FROM item WHERE i_id = %s", (item,))
                found = cur.fetchone()
                if found is None:
                    return False
                price = found[0]
                cur.execute(f"SELECT s_quantity, s_data, s_dist_{d:02d} FROM stock WHERE s_i_id = %s AND s_w_id = %s "
                            "FOR UPDATE", (item, w))
                stock, _, dist_info = cur.fetchone()
                stock = stock - quantity if stock - quantity >= 10 else stock - quantity + 91
                cur.execute("UPDATE stock SET s_quantity = %s, s_ytd = s_ytd + %s, s_order_cnt = s_order_cnt + 1 "
                            "WHERE s_i_id = %s AND s_w_id = %s", (stock, quantity, item, w))
                amount = quantity * price * (1 + w_tax + d_tax) * (1 - discount)
                cur.execute("INSERT INTO order_line VALUES (%s, %s, %s, %s, %s, %s, NULL, %s, %s, %s)",
                            (o, d, w, number, item, w, quantity, round(amount, 2), dist_info))
        return True

    def payment(self) -> bool:
        """Clause 2.5.2 (a home customer: one warehouse)."""
        s, r, w = self.scale, self.r, self.w
        d = r.uniform(1, s.districts)
        amount = r.uniform(100, 500000) / 100
        with self.conn.cursor() as cur:
            cur.execute("UPDATE warehouse SET w_ytd = w_ytd + %s WHERE w_id = %s RETURNING w_name", (amount, w))
            w_name = cur.fetchone()[0]
            cur.execute("UPDATE district SET d_ytd = d_ytd + %s WHERE d_w_id = %s AND d_id = %s RETURNING d_name",
                        (amount, w, d))
            d_name = cur.fetchone()[0]
            c, credit = self._customer(cur, d, "c_credit")
            cur.execute("UPDATE customer SET c_balance = c_balance - %s, c_ytd_payment = c_ytd_payment + %s, "
                        "c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s",
                        (amount, amount, w, d, c))
            if credit == "BC":
                note = f"{c} {d} {w} {d} {w} {amount:.2f} "
                cur.execute("UPDATE customer SET c_data = substr(%s || c_data, 1, 500) WHERE c_w_id = %s "
                            "AND c_d_id = %s AND c_id = %s", (note, w, d, c))
            cur.execute("INSERT INTO history VALUES (%s, %s, %s, %s, %s, now(), %s, %s)",
                        (c, d, w, d, w, amount, f"{w_name}    {d_name}"[:24]))
        return True

    def order_status(self) -> bool:
        """Clause 2.6.2."""
        d = self.r.uniform(1, self.scale.districts)
        with self.conn.cursor() as cur:
            c, *_ = self._customer(cur, d, "c_balance, c_first, c_middle, c_last")
            cur.execute("SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id = %s AND o_d_id = %s "
                        "AND o_c_id = %s ORDER BY o_id DESC LIMIT 1", (self.w, d, c))
            last = cur.fetchone()
            if last is not None:
                cur.execute("SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line "
                            "WHERE ol_w_id = %s AND ol_d_id = %s AND ol_o_id = %s", (self.w, d, last[0]))
                cur.fetchall()
        return True

    def delivery(self) -> bool:
        """Clause 2.7.4, every district in one transaction."""
        w = self.w
        carrier = self.r.uniform(1, 10)
        with self.conn.cursor() as cur:
            for d in range(1, self.scale.districts + 1):
                cur.execute("SELECT min(no_o_id) FROM new_order WHERE no_w_id = %s AND no_d_id = %s", (w, d))
                o = cur.fetchone()[0]
                if o is None:
                    continue                            # none to deliver in this district (2.7.4.2)
                cur.execute("DELETE FROM new_order WHERE no_w_id = %s AND no_d_id = %s AND no_o_id = %s", (w, d, o))
                cur.execute("UPDATE orders SET o_carrier_id = %s WHERE o_w_id = %s AND o_d_id = %s AND o_id = %s "
                            "RETURNING o_c_id", (carrier, w, d, o))
                c = cur.fetchone()[0]
                cur.execute("UPDATE order_line SET ol_delivery_d = now() WHERE ol_w_id = %s AND ol_d_id = %s "
                            "AND ol_o_id = %s", (w, d, o))
                cur.execute("SELECT sum(ol_amount) FROM order_line WHERE ol_w_id = %s AND ol_d_id = %s "
                            "AND ol_o_id = %s", (w, d, o))
                total = cur.fetchone()[0]
                cur.execute("UPDATE customer SET c_balance = c_balance + %s, c_delivery_cnt = c_delivery_cnt + 1 "
                            "WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s", (total, w, d, c))
        return True

    def stock_level(self) -> bool:
        """Clause 2.8.2 (the terminal's own district, a threshold of 10-20)."""
        threshold = self.r.uniform(10, 20)
        with self.conn.cursor() as cur:
            cur.execute("SELECT d_next_o_id FROM district WHERE d_w_id = %s AND d_id = %s", (self.w, self.d))
            o = cur.fetchone()[0]
            cur.execute("SELECT count(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = %s AND ol_d_id = %s "
                        "AND ol_o_id < %s AND ol_o_id >= %s AND s_w_id = %s AND s_i_id = ol_i_id "
                        "AND s_quantity < %s", (self.w, self.d, o, o - 20, self.w, threshold))
            cur.fetchone()
        return True


def table_counts(conn, tables=TABLES) -> dict:
    """Rows per table of ``tables`` (default the nine of TPC-C)."""
    with conn.cursor() as cur:
        out = {}
        for t in tables:
            cur.execute(f"SELECT count(*) FROM {t}")
            out[t] = int(cur.fetchone()[0])
    conn.commit()
    return out


def check_consistency(conn) -> list:
    """The specification's consistency conditions 1-4 (clause 3.3.2); returns the
    violations found (an empty list when the database is consistent)."""
    checks = {
        "1: W_YTD = sum(D_YTD)": "SELECT w_id FROM warehouse JOIN (SELECT d_w_id, sum(d_ytd) s FROM district "
                                 "GROUP BY d_w_id) x ON d_w_id = w_id WHERE w_ytd <> s",
        "2: D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)":
            "SELECT d_w_id, d_id FROM district d WHERE d_next_o_id - 1 <> (SELECT max(o_id) FROM orders "
            "WHERE o_w_id = d_w_id AND o_d_id = d_id) OR d_next_o_id - 1 <> coalesce((SELECT max(no_o_id) "
            "FROM new_order WHERE no_w_id = d_w_id AND no_d_id = d_id), d_next_o_id - 1)",
        "3: max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER":
            "SELECT no_w_id, no_d_id FROM new_order GROUP BY no_w_id, no_d_id "
            "HAVING max(no_o_id) - min(no_o_id) + 1 <> count(*)",
        "4: sum(O_OL_CNT) = rows in ORDER-LINE":
            "SELECT o_w_id, o_d_id FROM orders o GROUP BY o_w_id, o_d_id HAVING sum(o_ol_cnt) <> "
            "(SELECT count(*) FROM order_line WHERE ol_w_id = o.o_w_id AND ol_d_id = o.o_d_id)",
    }
    found = []
    with conn.cursor() as cur:
        for name, sql in checks.items():
            cur.execute(sql)
            bad = cur.fetchall()
            if bad:
                found.append(f"condition {name} fails for {bad[:3]}")
    conn.commit()
    return found
