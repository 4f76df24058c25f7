"""TPC-W on PostgreSQL: the schema, a scaled-down population, the interaction mixes and the
database's invariants.

Written by this project from the TPC Benchmark W specification (Transaction Processing
Performance Council, version 1.8, 2002): the ten tables of its clause 1.3 and the
population rules of clause 4.7, for ``ebs`` emulated browsers and ``items`` items.  Foglia,
Giorgi & Prete (IEE Proc. Computers and Digital Techniques, 2004, §3) ran 20 emulated
browsers over about 100,000 items (a 200 MB database).  :class:`Scale` keeps the
specification's rules and shrinks the two sizes: by default 10,000 items (the
specification's second size) and the customers, addresses and orders of 20 browsers
divided by ``factor`` = 10, about 9 MB on disk, so that a recording runs in minutes under
valgrind.

The fourteen web interactions (clause 2) are served by the project's PHP application
(``tpcw_app/tpcw.php``) through Apache; :data:`MIXES` are the browsing, shopping and
ordering mixes of clause 5.2.1 (the shopping mix is the one of the primary metric, WIPS).
:func:`check_invariants` tests what every interaction must keep true and is what the
tests run after a recorded run.
"""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass

import numpy as np

from mva.errors import ModelError

from . import tpcc_db
from .pgserver import copy_rows

__all__ = ["Scale", "TABLES", "INTERACTIONS", "MIXES", "SCHEMA", "SUBJECTS", "create_schema", "load",
           "check_invariants", "table_counts"]

TABLES = ("country", "author", "item", "customer", "address", "orders", "order_line", "cc_xacts", "shopping_cart",
          "shopping_cart_line")

#: The fourteen web interactions (clause 2.1), in the specification's order.
INTERACTIONS = ("home", "new_products", "best_sellers", "product_detail", "search_request", "search_result",
                "shopping_cart", "customer_registration", "buy_request", "buy_confirm", "order_inquiry",
                "order_display", "admin_request", "admin_confirm")

#: Clause 5.2.1, Table 5.2 (percent of web interactions), in the order of :data:`INTERACTIONS`.
MIXES = {
    "browsing": (29.00, 11.00, 11.00, 21.00, 12.00, 11.00, 2.00, 0.82, 0.75, 0.69, 0.30, 0.25, 0.10, 0.09),
    "shopping": (16.00, 5.00, 5.00, 17.00, 20.00, 17.00, 11.60, 3.00, 2.60, 1.20, 0.75, 0.66, 0.10, 0.09),
    "ordering": (9.12, 0.46, 0.46, 12.35, 14.53, 13.08, 13.53, 12.86, 12.73, 10.18, 0.25, 0.22, 0.12, 0.11),
}

#: Clause 4.7.1: the 24 subjects of I_SUBJECT.
SUBJECTS = ("ARTS", "BIOGRAPHIES", "BUSINESS", "CHILDREN", "COMPUTERS", "COOKING", "HEALTH", "HISTORY", "HOME",
            "HUMOR", "LITERATURE", "MYSTERY", "NON-FICTION", "PARENTING", "POLITICS", "REFERENCE", "RELIGION",
            "ROMANCE", "SELF-HELP", "SCIENCE-NATURE", "SCIENCE-FICTION", "SPORTS", "YOUTH", "TRAVEL")

SCHEMA = """
CREATE TABLE country (co_id int PRIMARY KEY, co_name varchar(50), co_exchange numeric(12,6), co_currency varchar(18));
CREATE TABLE author (a_id int PRIMARY KEY, a_fname varchar(20), a_lname varchar(20), a_mname varchar(20),
  a_dob date, a_bio varchar(500));
CREATE INDEX author_lname ON author (a_lname);
CREATE TABLE item (i_id int PRIMARY KEY, i_title varchar(60), i_a_id int REFERENCES author, i_pub_date date,
  i_publisher varchar(60), i_subject varchar(60), i_desc varchar(500), i_related1 int, i_related2 int,
  i_related3 int, i_related4 int, i_related5 int, i_thumbnail varchar(40), i_image varchar(40),
  i_srp numeric(15,2), i_cost numeric(15,2), i_avail date, i_stock int, i_isbn char(13), i_page int,
  i_backing varchar(15), i_dimensions varchar(25));
CREATE INDEX item_subject ON item (i_subject, i_pub_date DESC, i_title);
CREATE INDEX item_title ON item (i_title);
CREATE INDEX item_author ON item (i_a_id);
CREATE TABLE address (addr_id int PRIMARY KEY, addr_street1 varchar(40), addr_street2 varchar(40),
  addr_city varchar(30), addr_state varchar(20), addr_zip varchar(10), addr_co_id int REFERENCES country);
CREATE TABLE customer (c_id int PRIMARY KEY, c_uname varchar(20) UNIQUE, c_passwd varchar(20), c_fname varchar(17),
  c_lname varchar(17), c_addr_id int REFERENCES address, c_phone varchar(18), c_email varchar(50), c_since date,
  c_last_login date, c_login timestamp, c_expiration timestamp, c_discount numeric(5,2), c_balance numeric(15,2),
  c_ytd_pmt numeric(15,2), c_birthdate date, c_data varchar(500));
CREATE TABLE orders (o_id int PRIMARY KEY, o_c_id int REFERENCES customer, o_date timestamp,
  o_sub_total numeric(15,2), o_tax numeric(15,2), o_total numeric(15,2), o_ship_type varchar(10),
  o_ship_date timestamp, o_bill_addr_id int REFERENCES address, o_ship_addr_id int REFERENCES address,
  o_status varchar(15));
CREATE INDEX orders_customer ON orders (o_c_id, o_date DESC);
CREATE TABLE order_line (ol_id int, ol_o_id int REFERENCES orders, ol_i_id int REFERENCES item, ol_qty int,
  ol_discount numeric(5,2), ol_comments varchar(110), PRIMARY KEY (ol_o_id, ol_id));
CREATE INDEX order_line_item ON order_line (ol_i_id);
CREATE TABLE cc_xacts (cx_o_id int PRIMARY KEY REFERENCES orders, cx_type varchar(10), cx_num varchar(20),
  cx_name varchar(30), cx_expire date, cx_auth_id char(15), cx_xact_amt numeric(15,2), cx_xact_date timestamp,
  cx_co_id int REFERENCES country);
CREATE TABLE shopping_cart (sc_id serial PRIMARY KEY, sc_time timestamp);
CREATE TABLE shopping_cart_line (scl_sc_id int REFERENCES shopping_cart, scl_qty int, scl_i_id int REFERENCES item,
  PRIMARY KEY (scl_sc_id, scl_i_id));
CREATE SEQUENCE customer_id;
CREATE SEQUENCE address_id;
CREATE SEQUENCE order_id;
"""


@dataclass(frozen=True)
class Scale:
    """Clause 4.7.1's cardinalities for ``ebs`` browsers and ``items`` items, with the
    browser-dependent ones (customers 2,880 a browser, addresses 2 a customer, orders
    0.9 a customer) divided by ``factor``; authors are a quarter of the items and the
    countries the specification's 92."""

    ebs: int = 20
    items: int = 10_000
    factor: int = 10

    def __post_init__(self):
        for name in ("ebs", "items", "factor"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ModelError(f"scale.{name}", f"must be a positive integer, got {v!r}")
        if self.items < 20:
            raise ModelError("scale.items", f"must be at least 20 (five related items each), got {self.items}")
        if self.customers < 10:
            raise ModelError("scale.factor", f"leaves {self.customers} customers; at most {self.ebs * 288} "
                                             f"for {self.ebs} browsers")

    @property
    def customers(self) -> int:
        return 2880 * self.ebs // self.factor

    @property
    def addresses(self) -> int:
        return 2 * self.customers

    @property
    def orders(self) -> int:
        return int(0.9 * self.customers)

    @property
    def authors(self) -> int:
        return max(1, self.items // 4)

    countries = 92


def create_schema(conn) -> None:
    """Create the tables, indexes and id sequences in the connected database."""
    with conn.cursor() as cur:
        cur.execute(SCHEMA)
    conn.commit()


class _Random:
    """Clause 4.6's random strings and numbers from one seeded generator."""

    ALPHA = np.frombuffer(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", dtype=np.uint8)

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def text(self, lo: int, hi: int) -> str:
        n = int(self.rng.integers(lo, hi + 1))
        return self.ALPHA[self.rng.integers(0, len(self.ALPHA), n)].tobytes().decode()

    def uniform(self, lo: int, hi: int) -> int:
        return int(self.rng.integers(lo, hi + 1))


def digsyl(d: int) -> str:
    """Clause 4.6.2.12: the number's digits as syllables, e.g. 371 -> 'ANDBAROG' (the
    customer user names, C_UNAME)."""
    syllables = ("BA", "OG", "AL", "RI", "RE", "SE", "AT", "UL", "IN", "NG")
    return "".join(syllables[int(c)] for c in str(d))


def load(conn, scale: Scale, seed: int = 1) -> dict:
    """Populate the tables (clause 4.7) with COPY; returns rows per table."""
    r = _Random(seed)
    start = _dt.datetime(2002, 1, 1)
    rows = {}

    def copy(table, records):
        rows[table] = rows.get(table, 0) + copy_rows(conn, table, records)

    copy("country", [(k, f"country-{k}", round(0.5 + k / 46, 6), f"cur-{k}") for k in range(1, scale.countries + 1)])
    copy("author", [(a, r.text(3, 20), r.text(1, 20), r.text(1, 20), _dt.date(1800, 1, 1) + _dt.timedelta(
        days=r.uniform(0, 70000)), r.text(125, 500)) for a in range(1, scale.authors + 1)])
    items = []
    for i in range(1, scale.items + 1):
        related = set()
        while len(related) < 5:
            related.add(r.uniform(1, scale.items))
        srp = r.uniform(100, 99999) / 100
        items.append((i, r.text(14, 60), (i - 1) % scale.authors + 1 if i <= scale.authors else r.uniform(
            1, scale.authors), _dt.date(1930, 1, 1) + _dt.timedelta(days=r.uniform(0, 26000)), r.text(14, 60),
            SUBJECTS[r.uniform(0, len(SUBJECTS) - 1)], r.text(100, 500), *sorted(related),
            f"img{i % 100}/thumb_{i}.gif", f"img{i % 100}/image_{i}.gif", srp, round(srp * (1 - r.uniform(0, 50) / 100), 2),
            _dt.date(2002, 1, 1) + _dt.timedelta(days=r.uniform(1, 30)), r.uniform(10, 30), r.text(13, 13),
            r.uniform(20, 9999), ("HARDBACK", "PAPERBACK", "USED", "AUDIO", "LIMITED-EDITION")[r.uniform(0, 4)],
            f"{r.uniform(1, 99)}x{r.uniform(1, 99)}x{r.uniform(1, 99)}"))
    copy("item", items)
    copy("address", [(a, r.text(15, 40), r.text(15, 40), r.text(4, 30), r.text(2, 20), r.text(5, 10),
                      r.uniform(1, scale.countries)) for a in range(1, scale.addresses + 1)])
    customers = []
    for c in range(1, scale.customers + 1):
        since = start - _dt.timedelta(days=r.uniform(1, 730))
        login = since + _dt.timedelta(days=r.uniform(0, 60))
        customers.append((c, digsyl(c), digsyl(c).lower(), r.text(8, 15), r.text(8, 15), r.uniform(
            1, scale.addresses), r.text(9, 16), f"{digsyl(c)}@{r.text(2, 9)}.com", since.date(), login.date(), start,
            start + _dt.timedelta(hours=2), r.uniform(0, 50) / 100, 0.0, r.uniform(0, 99999) / 100,
            _dt.date(1930, 1, 1) + _dt.timedelta(days=r.uniform(0, 25000)), r.text(100, 500)))
    copy("customer", customers)
    orders, lines, xacts = [], [], []
    for o in range(1, scale.orders + 1):
        c = r.uniform(1, scale.customers)
        count = r.uniform(1, 5)
        sub_total = 0.0
        for ol in range(1, count + 1):
            qty = r.uniform(1, 300)
            cost = items[r.uniform(1, scale.items) - 1]
            sub_total += qty * float(cost[15])
            lines.append((ol, o, cost[0], qty, r.uniform(0, 30) / 100, r.text(20, 100)))
        sub_total = round(sub_total * (1 - customers[c - 1][12]), 2)
        tax = round(0.0825 * sub_total, 2)
        total = round(sub_total + 3.00 + count + tax, 2)
        date = start - _dt.timedelta(days=r.uniform(1, 60))
        orders.append((o, c, date, sub_total, tax, total, ("AIR", "UPS", "FEDEX", "SHIP", "COURIER", "MAIL")[
            r.uniform(0, 5)], date + _dt.timedelta(days=r.uniform(0, 7)), r.uniform(1, scale.addresses),
            r.uniform(1, scale.addresses), ("PROCESSING", "SHIPPED", "PENDING", "DENIED")[r.uniform(0, 3)]))
        xacts.append((o, ("VISA", "MASTERCARD", "DISCOVER", "AMEX", "DINERS")[r.uniform(0, 4)],
                      "".join(str(r.uniform(0, 9)) for _ in range(16)), r.text(14, 30),
                      (start + _dt.timedelta(days=r.uniform(10, 730))).date(), r.text(15, 15), total, date,
                      r.uniform(1, scale.countries)))
    copy("orders", orders)
    copy("order_line", lines)
    copy("cc_xacts", xacts)
    with conn.cursor() as cur:
        for seq, value in (("customer_id", scale.customers), ("address_id", scale.addresses),
                           ("order_id", scale.orders)):
            cur.execute(f"SELECT setval('{seq}', %s)", (value,))
    conn.commit()
    rows["shopping_cart"] = rows["shopping_cart_line"] = 0
    return rows


def table_counts(conn) -> dict:
    """Rows per table of the ten."""
    return tpcc_db.table_counts(conn, TABLES)


#: What every interaction keeps true: name -> a query that returns the number of rows
#: breaking it (0 when the database is consistent).
INVARIANTS = {
    "every order has 1 to 5 lines": "SELECT count(*) FROM (SELECT o_id, (SELECT count(*) FROM order_line "
                                    "WHERE ol_o_id = o_id) AS n FROM orders) t WHERE n < 1 OR n > 5",
    "every order has its credit-card transaction": "SELECT count(*) FROM orders LEFT JOIN cc_xacts ON "
                                                   "cx_o_id = o_id WHERE cx_o_id IS NULL",
    "a transaction's amount is its order's total": "SELECT count(*) FROM orders JOIN cc_xacts ON cx_o_id = o_id "
                                                   "WHERE cx_xact_amt <> o_total",
    "an order's total is sub-total + tax + shipping": "SELECT count(*) FROM orders WHERE o_total <> o_sub_total + "
                                                      "o_tax + 3.00 + (SELECT count(*) FROM order_line "
                                                      "WHERE ol_o_id = o_id)",
    "order ids are below the order sequence": "SELECT count(*) FROM orders WHERE o_id > "
                                              "(SELECT last_value FROM order_id)",
    "no item's stock is negative": "SELECT count(*) FROM item WHERE i_stock < 0",
    "every cart line has a positive quantity": "SELECT count(*) FROM shopping_cart_line WHERE scl_qty < 1",
    "a customer's user name is its id's syllables": "SELECT count(*) FROM customer WHERE c_id <= "
                                                    "(SELECT last_value FROM customer_id) AND c_uname IS NULL",
}


def check_invariants(conn) -> dict:
    """``{invariant: rows breaking it}`` for :data:`INVARIANTS` (all 0 when consistent)."""
    out = {}
    with conn.cursor() as cur:
        for name, sql in INVARIANTS.items():
            cur.execute(sql)
            out[name] = int(cur.fetchone()[0])
    conn.commit()
    return out
