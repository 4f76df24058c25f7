<?php
// The fourteen TPC-W web interactions (TPC Benchmark W, version 1.8, clause 2) over the
// PostgreSQL database of calibration/sim/tpcw_db.py, one page each, for the recordings of
// calibration/sim/tpcw_recorder.py.  The browser gives the session's state in the query
// string (c_id, sc_id); every database change of an interaction is one transaction.
// The connection is persistent: each Apache child keeps one PostgreSQL backend.

$db = pg_pconnect($_SERVER['TPCW_PG']);
if (!$db) { http_response_code(500); exit("no database\n"); }

// A backend's first query names the marker file, which the recorder finds in the
// backend's system calls: its trace is kept from there (its start-up is left out).
$seen = $_SERVER['TPCW_RUN'] . '/child-' . getmypid();
if (!file_exists($seen)) {
    touch($seen);
    pg_query($db, "SELECT pg_stat_file('tpcw-mark', true)");
}

function q($db, $sql, $args = []) {
    $r = pg_query_params($db, $sql, $args);
    if ($r === false) { http_response_code(500); exit(pg_last_error($db) . "\n"); }
    return $r;
}
function rows($r) { return pg_fetch_all($r) ?: []; }
function arg($name, $default = '') { return isset($_GET[$name]) ? $_GET[$name] : $default; }
function head($title) {
    echo "<html><head><title>TPC-W $title</title></head><body><img src=\"/img/logo.gif\">",
         "<h1>", htmlspecialchars($title), "</h1>\n";
}
function table($rows) {
    echo "<table>\n";
    foreach ($rows as $row) {
        echo "<tr>";
        foreach ($row as $v) echo "<td>", htmlspecialchars((string)$v), "</td>";
        echo "</tr>\n";
    }
    echo "</table>\n";
}
// Clause 2.1.1.2: five promotional items, the related items of a random one.
function promotion($db) {
    $i = mt_rand(1, (int)$_SERVER['TPCW_ITEMS']);
    table(rows(q($db, "SELECT i_id, i_thumbnail FROM item WHERE i_id IN (SELECT unnest(ARRAY[i_related1, "
                    . "i_related2, i_related3, i_related4, i_related5]) FROM item WHERE i_id = $1)", [$i])));
}
function cart_lines($db, $sc) {
    return rows(q($db, "SELECT scl_i_id, i_title, i_cost, i_srp, i_backing, scl_qty FROM shopping_cart_line, item "
                     . "WHERE scl_sc_id = $1 AND scl_i_id = i_id ORDER BY scl_i_id", [$sc]));
}

$wi = arg('wi', 'home');
$c_id = (int)arg('c_id', 0);
$sc_id = (int)arg('sc_id', 0);
switch ($wi) {
case 'home':                                                    // clause 2.3
    head('Home');
    if ($c_id > 0) table(rows(q($db, "SELECT c_fname, c_lname FROM customer WHERE c_id = $1", [$c_id])));
    promotion($db);
    break;
case 'new_products':                                            // clause 2.12
    head('New Products');
    table(rows(q($db, "SELECT i_id, i_title, a_fname, a_lname FROM item, author WHERE i_a_id = a_id AND "
                    . "i_subject = $1 ORDER BY i_pub_date DESC, i_title LIMIT 50", [arg('subject', 'ARTS')])));
    break;
case 'best_sellers':                                            // clause 2.13
    head('Best Sellers');
    table(rows(q($db, "SELECT i_id, i_title, a_fname, a_lname, sum(ol_qty) AS sold FROM item, author, order_line "
                    . "WHERE ol_o_id > (SELECT max(o_id) - 3333 FROM orders) AND ol_i_id = i_id AND i_a_id = a_id "
                    . "AND i_subject = $1 GROUP BY i_id, i_title, a_fname, a_lname ORDER BY sold DESC LIMIT 50",
                    [arg('subject', 'ARTS')])));
    break;
case 'product_detail':                                          // clause 2.14
    head('Product Detail');
    table(rows(q($db, "SELECT i_title, a_fname, a_lname, i_pub_date, i_publisher, i_subject, i_desc, i_image, "
                    . "i_cost, i_srp, i_avail, i_isbn, i_page, i_backing, i_dimensions FROM item, author "
                    . "WHERE i_id = $1 AND i_a_id = a_id", [(int)arg('i_id', 1)])));
    break;
case 'search_request':                                          // clause 2.10
    head('Search Request');
    promotion($db);
    echo "<form action=\"tpcw.php\"><select name=\"type\"><option>author<option>title<option>subject</select>",
         "<input name=\"search\"></form>\n";
    break;
case 'search_result':                                           // clause 2.11
    head('Search Result');
    $type = arg('type', 'title');
    $s = arg('search', 'A');
    if ($type == 'author') {
        $r = q($db, "SELECT i_id, i_title, a_fname, a_lname FROM item, author WHERE a_lname LIKE $1 AND "
                  . "i_a_id = a_id ORDER BY i_title LIMIT 50", [$s . '%']);
    } elseif ($type == 'subject') {
        $r = q($db, "SELECT i_id, i_title, a_fname, a_lname FROM item, author WHERE i_subject = $1 AND "
                  . "i_a_id = a_id ORDER BY i_title LIMIT 50", [$s]);
    } else {
        $r = q($db, "SELECT i_id, i_title, a_fname, a_lname FROM item, author WHERE i_title LIKE $1 AND "
                  . "i_a_id = a_id ORDER BY i_title LIMIT 50", [$s . '%']);
    }
    table(rows($r));
    break;
case 'shopping_cart':                                           // clause 2.4
    head('Shopping Cart');
    q($db, "BEGIN");
    if ($sc_id <= 0 || pg_num_rows(q($db, "SELECT 1 FROM shopping_cart WHERE sc_id = $1", [$sc_id])) == 0) {
        $sc_id = (int)pg_fetch_result(q($db, "INSERT INTO shopping_cart (sc_time) VALUES (now()) RETURNING sc_id"), 0, 0);
    }
    $i = (int)arg('i_id', 0);
    if ($i > 0) {
        q($db, "INSERT INTO shopping_cart_line (scl_sc_id, scl_qty, scl_i_id) VALUES ($1, $2, $3) "
             . "ON CONFLICT (scl_sc_id, scl_i_id) DO UPDATE SET scl_qty = shopping_cart_line.scl_qty + $2",
             [$sc_id, max(1, (int)arg('qty', 1)), $i]);
    }
    q($db, "UPDATE shopping_cart SET sc_time = now() WHERE sc_id = $1", [$sc_id]);
    q($db, "COMMIT");
    echo "<p id=\"sc_id\">$sc_id</p>\n";
    table(cart_lines($db, $sc_id));
    promotion($db);
    break;
case 'customer_registration':                                   // clause 2.5
    head('Customer Registration');
    if ($c_id > 0) table(rows(q($db, "SELECT c_uname, c_fname, c_lname FROM customer WHERE c_id = $1", [$c_id])));
    echo "<form action=\"tpcw.php\"><input name=\"uname\"><input name=\"passwd\"></form>\n";
    break;
case 'buy_request':                                             // clause 2.6
    head('Buy Request');
    q($db, "BEGIN");
    if ($c_id > 0) {
        q($db, "UPDATE customer SET c_login = now(), c_expiration = now() + interval '2 hours' WHERE c_id = $1",
          [$c_id]);
    } else {                                                    // a new customer registers (clause 2.6.3.2)
        $addr = (int)pg_fetch_result(q($db, "INSERT INTO address VALUES (nextval('address_id'), 'street1', "
                  . "'street2', 'city', 'state', '12345', $1) RETURNING addr_id", [mt_rand(1, 92)]), 0, 0);
        $c_id = (int)pg_fetch_result(q($db, "SELECT nextval('customer_id')"), 0, 0);
        $syl = ['BA', 'OG', 'AL', 'RI', 'RE', 'SE', 'AT', 'UL', 'IN', 'NG'];
        $uname = implode('', array_map(function ($d) use ($syl) { return $syl[(int)$d]; }, str_split((string)$c_id)));
        q($db, "INSERT INTO customer VALUES ($1, $2, lower($2), 'first', 'last', $3, '5551234', $2 || '@x.com', "
             . "current_date, current_date, now(), now() + interval '2 hours', 0.10, 0, 0, '1970-01-01', 'new')",
             [$c_id, $uname, $addr]);
    }
    table(rows(q($db, "SELECT c_fname, c_lname, c_discount, addr_street1, addr_city, co_name FROM customer, "
                    . "address, country WHERE c_id = $1 AND c_addr_id = addr_id AND addr_co_id = co_id", [$c_id])));
    q($db, "COMMIT");
    echo "<p id=\"c_id\">$c_id</p>\n";
    table(cart_lines($db, $sc_id));
    break;
case 'buy_confirm':                                             // clause 2.7
    head('Buy Confirm');
    q($db, "BEGIN");
    $lines = cart_lines($db, $sc_id);
    $cust = pg_fetch_assoc(q($db, "SELECT c_discount, c_addr_id FROM customer WHERE c_id = $1", [$c_id]));
    if (!$lines || !$cust) { q($db, "ROLLBACK"); echo "<p>empty cart</p>\n"; break; }
    $sub = 0.0;
    foreach ($lines as $l) $sub += $l['scl_qty'] * $l['i_cost'];
    $sub = round($sub * (1 - $cust['c_discount']), 2);
    $tax = round(0.0825 * $sub, 2);
    $total = round($sub + 3.00 + count($lines) + $tax, 2);
    $o = (int)pg_fetch_result(q($db, "INSERT INTO orders VALUES (nextval('order_id'), $1, now(), $2, $3, $4, 'AIR', "
              . "now() + interval '3 days', $5, $5, 'PENDING') RETURNING o_id",
              [$c_id, $sub, $tax, $total, $cust['c_addr_id']]), 0, 0);
    $n = 0;
    foreach ($lines as $l) {
        $n++;
        q($db, "INSERT INTO order_line VALUES ($1, $2, $3, $4, 0.00, 'comment')", [$n, $o, $l['scl_i_id'], $l['scl_qty']]);
        // clause 2.7.3.6: stock below 10 after the order is refilled by 21
        q($db, "UPDATE item SET i_stock = CASE WHEN i_stock - $1 < 10 THEN i_stock - $1 + 21 ELSE i_stock - $1 END "
             . "WHERE i_id = $2", [$l['scl_qty'], $l['scl_i_id']]);
    }
    q($db, "INSERT INTO cc_xacts VALUES ($1, 'VISA', '4111111111111111', 'name', current_date + 365, 'AUTH0000000000', "
         . "$2, now(), $3)", [$o, $total, mt_rand(1, 92)]);
    q($db, "DELETE FROM shopping_cart_line WHERE scl_sc_id = $1", [$sc_id]);
    q($db, "COMMIT");
    echo "<p id=\"o_id\">$o</p><p>total $total</p>\n";
    break;
case 'order_inquiry':                                           // clause 2.8
    head('Order Inquiry');
    echo "<form action=\"tpcw.php\"><input name=\"uname\"><input name=\"passwd\"></form>\n";
    break;
case 'order_display':                                           // clause 2.9
    head('Order Display');
    $o = pg_fetch_assoc(q($db, "SELECT o_id, o_date, o_sub_total, o_tax, o_total, o_ship_type, o_status, "
                             . "o_bill_addr_id, o_ship_addr_id FROM orders WHERE o_c_id = $1 "
                             . "ORDER BY o_date DESC, o_id DESC LIMIT 1", [$c_id]));
    if ($o) {
        table([$o]);
        table(rows(q($db, "SELECT ol_i_id, i_title, i_publisher, i_cost, ol_qty, ol_discount, ol_comments "
                        . "FROM order_line, item WHERE ol_o_id = $1 AND ol_i_id = i_id", [$o['o_id']])));
        table(rows(q($db, "SELECT cx_type, cx_auth_id, cx_xact_amt FROM cc_xacts WHERE cx_o_id = $1", [$o['o_id']])));
        table(rows(q($db, "SELECT addr_street1, addr_city, addr_zip, co_name FROM address, country "
                        . "WHERE addr_id IN ($1, $2) AND addr_co_id = co_id", [$o['o_bill_addr_id'], $o['o_ship_addr_id']])));
    }
    break;
case 'admin_request':                                           // clause 2.15
    head('Admin Request');
    table(rows(q($db, "SELECT i_id, i_title, i_image, i_thumbnail, i_cost FROM item WHERE i_id = $1",
                  [(int)arg('i_id', 1)])));
    break;
case 'admin_confirm':                                           // clause 2.16
    head('Admin Confirm');
    $i = (int)arg('i_id', 1);
    q($db, "BEGIN");
    // clause 2.16.3: the five items most often bought with this one in the last 10,000 orders
    $related = rows(q($db, "SELECT ol2.ol_i_id FROM order_line ol1, order_line ol2 WHERE ol1.ol_i_id = $1 AND "
                         . "ol1.ol_o_id = ol2.ol_o_id AND ol2.ol_i_id <> $1 AND ol1.ol_o_id > "
                         . "(SELECT max(o_id) - 10000 FROM orders) GROUP BY ol2.ol_i_id "
                         . "ORDER BY sum(ol2.ol_qty) DESC LIMIT 5", [$i]));
    $ids = array_map(function ($r) { return (int)$r['ol_i_id']; }, $related);
    while (count($ids) < 5) $ids[] = mt_rand(1, (int)$_SERVER['TPCW_ITEMS']);
    q($db, "UPDATE item SET i_cost = round(i_cost * 0.95, 2), i_image = 'img/new_' || $1 || '.gif', "
         . "i_thumbnail = 'img/new_thumb_' || $1 || '.gif', i_pub_date = current_date, i_related1 = $2, "
         . "i_related2 = $3, i_related3 = $4, i_related4 = $5, i_related5 = $6 WHERE i_id = $1",
         array_merge([$i], $ids));
    q($db, "COMMIT");
    break;
default:
    http_response_code(400);
    exit("unknown interaction\n");
}
echo "</body></html>\n";
