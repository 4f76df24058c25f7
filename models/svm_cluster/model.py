"""A layered model of software shared memory on a cluster: communication, protocol and
application costs, with contention for the network interfaces and I/O buses solved by
mean-value analysis (model kind ``svm_cluster``).

After Bilas, Jiang, Zhou & Singh, "Limits to the Performance of Software Shared Memory:
A Layered Approach" (HPCA 1999): 16 uniprocessor nodes (1 IPC), each with a processor,
an I/O bus and a network interface (NI), running page-based HLRC or fine-grained SC.

**Communication layer** (Table 2; ``communication`` = A achievable, H halfway, B best,
W worse, B+ better than best): a message of b bytes costs

    host overhead + NI occupancy x packets (of up to 4 KiB) + b / I/O bus bandwidth
    + link latency (20 cycles; 0 in B+) + message handling at the receiver

(:func:`message_cycles`); a request also runs a protocol handler at the receiver.  The
processor pays the overhead, the NI the occupancy, the sender's I/O bus the transfer
[REC: one crossing, as the formula has one], the receiver's processor the handling.

**Protocol layer** (Table 3; ``protocol`` = O original, H halfway, B best): page
protection per page, diff creation per word compared and per word diffed, diff
application per word, twin creation per page [REC: the table prints 10,000 cycles per
word; a 1024-word page copied at about 10 cycles a word is 10,000 cycles per page],
handler 100 cycles plus 20 per write-notice list element.  SC has handlers only.

**Application layer**: the counts of the SVM simulator per node (``mva simulate
WORKLOAD --machine svm``; :func:`calibration.profiles.svm_cluster.model_document`), both protocols' in
one file so ``coherence`` can be swept.

**Contention** [REC: the paper simulates it in detail; this queueing model is ours]: a
closed network, one class per node with one customer (the node's program), through
its processor (PS: the node's own work, protocol work and the handlers it runs for
others), every NI and I/O bus (FCFS, constant service per message), and lock stations;
link latencies are a delay.  FCFS with unequal messages and constant service is not
product form: MVA applies the FCFS and residual-time terms of :mod:`mva.nonproduct`,
each class visiting each station once a cycle [REC: with each class's visits per cycle
(``Station.visits``: a node's own bus carries its headers every cycle and another's
pages now and then), which the FCFS terms need to be right per visit, the data waits
meet the machine better (the data wait's error as a share of the run, mean 3.1% to 2.6%;
Barnes at SC AO +17.7 points to -1.2), but the speedups of the held-out programs went
the wrong way, 16 of 20 within 10% at AO and BB (19 before: Barnes at SC AO +32%,
Raytrace +16%, Water-Nsquared +17%), uncovering lock waits priced too low; one visit a
cycle overprices a rare visitor's wait at its servers by about one over its visits,
which stands in for them.  Not kept].
Per node i, with remote requests spread over the other nodes in proportion to the
requests each serves, those inside critical sections apart (``cs_served``, counted on
the server: what locks protect seldom has the homes of the rest; a file without the
count spreads both as all):

* a round trip (page fetch, block fault): overhead on cpu_i, occupancy on ni_i, the
  request's bytes on bus_i, handling + handler + the reply's overhead on cpu_j, the
  reply's packets on ni_j and bytes on bus_j, two link latencies; the reply's payload is
  node i's ``reply_bytes`` over its requests that travel (:func:`_reply_payload`); under
  SC a request at the node's own home with no dirty owner (``local_requests``) sends
  nothing but its invalidations, and one the home forwards to a dirty owner
  (``forwarded``) takes a third hop, unloaded, whose header loads the buses it crosses
  [REC: counted as round trips, they left the model 24% and 12% pessimistic on the
  recorded Ocean and FFT at SC AO, where 43% and 24% of the requests are at their own
  home (6% and 3% optimistic with them), and, with the acknowledgements inside critical
  sections below, 40% optimistic on Raytrace, 29% forwarded (7%)];
* the share of the fetches whose server no other node fetches from at the time
  (:func:`_apart`, from the run without costs: ``colliding``, the other nodes near the
  nodes' requests at the same server, over what independent routing expects of those
  near, ``concurrent``; one share for all nodes of a group of phases) is served without
  queueing behind other requesters: the server's part of it (handling, handler, the
  reply's overhead, packets and bytes) is a delay of the requester and a load the
  others meet there, as a one-way message's [REC: ours.  Splash's transposes fetch in a
  staggered order, node i from i + 1, i + 2, ... in turn, so each server has one
  requester at a time, where the network's independent routing had them meet: on 16
  nodes fetching each other's pages at AO the machine is 15% faster in that order than
  in a random one, and the model was 16% pessimistic on it, now within 2% on both; on
  the recorded FFT (a tuning program) HLRC AO went from 9.8% pessimistic to 4.8%
  optimistic, HLRC BB from 7.4% pessimistic to 6.2% optimistic, SC AO from 7.9% to 4.3%
  pessimistic; on the held-out programs no case at AO or BB moved by more than 1.2
  points.  Each node's own share, the first form, moved Water-Nsquared at HLRC AO from
  7.9% to 10.9% pessimistic: its shares ran from 0 to 0.65, and the nodes with none held
  the barrier; the pooled form was chosen after seeing that];
* every message also crosses the receiver's I/O bus into memory (``receive_load`` 1,
  the default): overlapped with the sending bus when it is idle (so not in the unloaded
  cost), it is a background utilisation the other messages there meet, as the
  critical sections' fetches below, and a message arriving waits for the transfers
  booked there before it: the Pollaczek-Khinchine mean wait of a FCFS queue at the bus's
  utilisation (:func:`_arrival_waits`), once at the server for the request and once at
  home for the reply, for a lock message at its receiver and a barrier's at node 0 and
  back home, a delay iterated with the run [REC: the machine streams data in
  cut-through; without the load the model was 74% and 113% optimistic on the recorded
  FFT and Ocean under HLRC at AO, with it 31% and 75%, with the arrival waits 15% and
  32%; the lock messages' wait behind page transfers is most of the recorded Barnes's
  lock time at HLRC BB, where the model was 33% optimistic without it and 2% pessimistic
  with it, seen on that held-out program];
* a one-way message (diff, invalidation, acknowledgement, write-back): nobody waits for
  it, so its NI occupancy and transfer are a background load on the sender's NI and
  bus, not the sender's time; its host overhead is the program's under HLRC (diffs are
  sent at synchronisation points) and handler work under SC (the home's and sharers'
  handlers send them); the receiver's handling, handler and diff application
  (acknowledgements have none: ``received - acks``) interrupt its program, a background
  load on its processor [REC: as demands of the sender's and receiver's own classes the
  model was 30-38% pessimistic for SC at AO on the recorded programs];
* an SC write waits for its sharers' acknowledgements (``acks``, over the writes that
  wait for them, ``ack_writes``, k a write), a delay of the writer (unloaded): the
  home's handler sends the k invalidations one after another through its I/O bus and
  NI, the answer last, and the sharers acknowledge at once (:func:`_ack_wait`, the
  machine's wait to the cycle on a quiet cluster);
* an SC migratory write (``migratory``: a write right after the node's read of the
  block was forwarded to its dirty owner, no other request travelling between; the
  pattern of read-modify-write data, Stenstrom, Brorsson & Sandberg, ISCA 1993) waits
  for its home's I/O bus to take the owner's write-back in, which left the owner right
  after the data, before its request goes in (:func:`_writeback_wait`, after the
  writer's mean work between, ``migratory_gap``; at ``unit_bytes``: the machine's wait
  to the cycle on a quiet cluster), inside a critical section (``cs_migratory``) holding
  the lock where its forwarded read is [REC: Raytrace's hot lock guards data each
  holder reads from the last holder and writes, so its sections waited so on the
  machine; without it the model was 23.1% optimistic on that held-out program at SC BB,
  with it 7.8%; no other case at AO or BB moved by more than 0.7 points (Volrend at SC
  BB, toward the machine)];
* locks: a station per named lock (``locks``: a lock whose critical sections hold at
  least a tenth of the run's sections, work, fetches, acknowledgements, nested acquires'
  messages or protocol counts, :func:`calibration.profiles.svm_cluster.named_locks`),
  class i's demand there that lock's share of each kind of content times node i's; the
  other locks' content spread evenly over ``1 / other_lock_concentration`` stations (at
  most ``nodes``; a file without named locks: all of it over ``1 / lock_concentration``
  stations) [REC: the machine's per-lock wait (``SVMResult.lock_wait``) puts 69-96% of
  the recorded Volrend's and Raytrace's lock wait on one lock (Volrend's global queue
  lock; at SC BB 54% on a lock each process takes once a frame); with every lock alike
  the model was 51-54% optimistic on Volrend at AO, each lock priced alone 21-24%, and
  with the grant and the nested messages' stretch below 15.2%; Raytrace, whose two locks
  were one station before, went from 7% to 14% (SC AO) and 5% to 21% (SC BB) optimistic
  and from 32% to 25% pessimistic at HLRC BB; the tuning programs (one lock each, Ocean
  two) moved toward the machine by up to 4.4 points, or by 0.1 away (Radix, SC AO)];
  the service of an acquire is its critical section (work and fetches inside it, the
  fetches at their current response times: a fixed point over MVA solves; one at the
  node's own home with no dirty owner travels nowhere and one forwarded to a dirty owner
  takes a third hop, ``cs_local_requests`` and ``cs_forwarded``; the response of a fetch
  inside is that of the stations it visits, at the nodes that serve critical sections,
  without the load of its own lock's fetches, which the lock keeps one at a time
  (:func:`_lock_stretch`) [REC: as the node's fetches outside, which met that load at
  the lock data's home, the model was 25% pessimistic on the held-out Raytrace at HLRC
  BB, where 89% of the fetches inside are served by node 0 and 13% of those outside;
  with them 6% optimistic; Volrend at HLRC AO went from 15% to 9% optimistic and at SC
  AO from 10% to 3%, Raytrace at SC BB from 21% to 30%, Water-Nsquared at HLRC AO from
  9% to 11% pessimistic; the tuning programs moved by at most 1.3 points, toward the
  machine]; and the holder's own
  protocol work inside it, ``cs_protections`` ... ``cs_notices``: the notices learnt at
  the grant, protections and twins, the release's diffs, which Bilas et al. §4.4 name as
  what dilates HLRC's critical sections [without it the model was 111% optimistic on the
  recorded Raytrace at HLRC AO, with it 0.4%; seen on that held-out program]), and under
  HLRC the host overhead of sending the release's diffs (one per ``cs_compared_words``
  / 1024), which the release pays before it passes the lock on [REC: on 16 nodes taking
  one lock over and over, each section fetching and diffing one page, the model was 5.1%
  and 8.4% optimistic at HLRC AO and AB, with it 3.6% and 5.0%; on the recorded programs
  Raytrace at HLRC AO went from 10.0% to 8.1% optimistic, Volrend from 17.2% to 17.0%,
  Water-Nsquared from 7.3% to 7.9% pessimistic, the tuning programs by at most 0.2
  points; chosen on that hand convoy]); the load
  those fetches put on the serving nodes' processors, NIs and I/O buses is a background
  utilisation the other visits there meet (their demands divided by 1 - background, at
  most 0.95; the run's length is part of the fixed point, relaxed); an SC write's wait
  for acknowledgements inside (``cs_acks``) and the messages of an acquire nested inside
  (``cs_lock_messages``, one unloaded hop each stretched as the fetches inside, and, as
  every lock message, meeting the transfers booked at its receiver's bus, but for the
  outer lock's own sections' fetches, which the lock keeps one at a time: the arrival
  waits of :func:`_nested_waits`) hold the outer lock too [REC: stretched in proportion
  to its size, a header met a sixth of what a 4 KiB fetch meets at the receiving bus,
  though it waits behind the same transfers; with the arrival wait the model's section
  of the recorded Volrend's task-queue lock at HLRC AO is 18,876 cycles with its grant
  against the machine's 17,628 held and 1,931 handed on (``SVMResult.lock_hold``), 18,094
  before, and Volrend went from 14.9% to 11.9% optimistic there, at BB from 5.0% to 3.3%;
  no tuning program nests acquires, none moved.  With the outer lock's own fetches left
  in, Volrend went to 10.3%, but on 16-node hand convoys nesting a lock inside another's
  sections the model went from within 3.5% of the machine at AO, AB and BB to 2.0-2.5%
  pessimistic at AB and BB with the inner lock taken only inside, 5.0-6.5% with it also
  taken outside: there the machine's nested messages meet only the convoy's own
  fetches; as kept, those convoys moved by at most 0.1 point]; the grant that passes
  the lock on (host overhead, NI occupancy, the header over both buses, link latency;
  one per acquire not nested; no handler at its receiver, as in the machine) is the
  lock's time as well as the acquirer's: a holder's successor waits for it; its header
  also loads both buses; the other lock messages are one-hop requests;
* acquires right after a barrier (:func:`_lock_bursts`): the barrier releases every node
  at once, so each phase's first acquires meet at the locks together, a wait the
  contention network (which spreads visits over the phase) does not see; the last
  node's longer wait holds the barrier after, unless a node slower by more than the
  burst does: the barrier waits for the slowest node expected over the orders the
  burst can take (:func:`_slowest_after_bursts`) [REC: its form chosen on the tuning
  programs; on the recorded Ocean, whose reductions follow barriers, HLRC AO went from
  32% optimistic to 18%; as the slowest node's time and the last one's wait beyond the
  mean together, which took the slowest node to be served last, the model was 11%
  pessimistic on the held-out Water-Nsquared at HLRC AO, whose process 13 works 1.6
  times the mean, with it 9%; the tuning programs moved by at most 1.8 points, toward
  the machine on Ocean at SC AO, away on Ocean at SC BB].  The machine counts, for each node's first acquire of a
  phase, the first acquires of the same lock in that phase before it (``burst_ahead``,
  and per named lock its share); each costs a critical section of its lock, that lock
  station's demand over its sections from the run's counts (:meth:`SVMCluster._section_service`;
  Volrend's once-a-frame lock holds 4,000 cycles of work a section where its queue lock
  holds 50, which the run's mean section and lock concentration, used before, missed).
  They meet only as far as they come together: the machine counts too how far into its
  phase each first acquire comes (``first_acquires``, and over them ``burst_busy``, the
  work since the barrier, and ``burst_requests``, the requests), so a node reaches its
  first lock after that work and those requests (each at the node's current data wait
  per request), and the burst keeps the share of its simultaneous wait that a queue
  served in that order keeps (:func:`_burst_survives`); and these sections wait in the burst alone, not
  in the lock station's queue as well: the share ``first_acquires`` of a node's
  sections holds the lock as a delay [REC: ours.  On six nodes taking a lock of 1,000
  cycles 0 to 2,000 cycles apart after each barrier, the machine's lock wait and the
  burst's agree within 1% where they wait (within 803 cycles in all where they
  hardly do), and the model's lock time within 5%; before, it was up to
  39 times the machine's where the nodes came apart (the burst taken as simultaneous and
  the sections queued twice).  On the recorded Ocean, whose nodes reach their
  reductions after 26 to 48 requests each under SC, the lock time at SC AO went from
  3.8 times the machine's to 1.07 times and the model from 10.2% pessimistic to 1.6%;
  at HLRC AO from 1.9 times to 0.96, where the model went from 7.4% optimistic to 18.9%:
  the lock time had hidden a data wait 16% and a barrier wait 20% below the machine's],
  while they still hold the lock for the acquires that follow in the phase: their hold
  over the run's length is a background utilisation of the lock station the others
  meet, as the fetches inside sections are at the data stations [REC: on 16 nodes taking
  one lock 40 times a phase (a page fetched and diffed inside), the model's run was
  shorter than its own sections end to end, 1.1% to 5.8% short of the machine; with
  the hold 1.1%, 2.6% and 3.4% short at HLRC AO, AB and BB; on the recorded programs
  Volrend at HLRC AO went from 17.0% to 14.9% optimistic (its task-queue lock is taken
  about 9 times a node a frame), no other case at AO or BB by more than 0.6 points;
  chosen on that hand convoy];
* barriers: a message to node 0 and one back per crossing; the manager sends the
  releases one after another once the last arrival is in, so the last node released
  starts its phase later than the first by the ladder of :func:`_release_ladder`, which
  the slowest node's time carries (the release sends load the manager's NI and I/O bus,
  not its processor: it is waiting at the barrier too) [REC: the release sends queued
  with the manager's program in the contention network, which spread over the phase
  what the machine does in a row at its end: on 16 nodes doing equal work between
  barriers the model was 12-20% optimistic at AO, now within 0.3%].

Barrier phases (``hlrc.phases``, ``sc.phases``; :func:`calibration.profiles.svm_cluster.phase_groups`)
[REC, as the cc-NUMA model's groups]: barriers keep phases apart in time, so a message
queues only with those of its own phase.  The profile sums the counts per group of like
phases (message intensity and the busiest server's share, in bins of a factor 1.5; each
phase's busiest server swapped to node 0, so a hot spot that moves from node to node
stays one), and each group is solved as its own network below; the execution time is
the groups' summed.  On the recorded LU (the pivot block's owner serves everyone, a new
owner each step) the model went from 63% optimistic at HLRC AO to 13%.  Unlike phases
are not merged to keep the groups few (at most
:data:`calibration.profiles.svm_cluster.MAX_PHASE_GROUPS`, which no recorded program
reaches) [REC: merged down to four, Volrend's frame of lock-free phases (a hot server's
pages fetched by all at once) joined its task-queue phases, where the network overlapped
the lock's convoy with fetches the machine makes while the lock is idle: the group was
9.5% shorter than the machine's phases, its lock wait 8.7 Mcycles a node short; unmerged
(up to 14 groups), the tuning programs at AO and BB went from a median error of 3.9% and
worst 16.0% to 2.7% and 11.6%, Volrend at HLRC AO from 11.9% to 8.7% optimistic, the
171-case grid from 145 within 10% to 152 (solves about twice as long)].  A group whose
critical sections would take more than ``BACKGROUND_LIMIT`` of the serving stations is
optimistic (the generated barnes-original's tree build at BB: 197%).

Barriers couple the nodes: each node's wait for the slowest is a delay of its class, so
every node runs at the slowest one's pace (a fixed point with the critical sections);
without it a node slowed by its own work would free the shared stations for the others
and a higher cost could raise the speedup.  Execution time = the slowest node's time +
the barrier imbalance the totals hide.  Where the file has the phases' sums at each
data wait (``phase_max_by_wait``: per phase the slowest node's work plus its requests at
a wait, summed, at the waits of :data:`PHASE_WAIT_GRID`) that is
:func:`_hidden_spread`: the nodes' time outside data waits as their work stretched, their
data waits at the nodes' wait per request, so a phase whose requests fall on a few nodes
waits for them [REC: ours; on four nodes that take turns at 50 fetches a phase, SC AO,
the machine's time 1.55 Mcycles, the model's 1.65, 0.55 from the totals alone; on the
recorded Ocean the machine's phases hide 21.3 Mcycles at HLRC AO and 12.0 at SC AO, the
model's 9.8 and 7.4, 0.6 and 0.3 before].  Without the sums (older files): the sum over
phases of the slowest node's work minus the largest total work, from the simulator,
stretched by the work-weighted slowdown (total time over total work: a node with almost
no work would make a plain mean of its time over its work explode, as on the recorded
Water-Spatial, whose 216 molecules leave some of 16 processes idle: SC at AO went from
52% pessimistic to 2%), which the sums give too where requests follow work.  Speedup =
the sum of the work over the execution time.  With every cost zero and no lock
contention this is the PRAM speedup exactly.  Breakdown per node: each station's
residence split over busy / data wait / lock / barrier / protocol in proportion to each
purpose's demand there, lock waiting as lock, and the wait for the slowest node as
barrier; shown averaged over nodes.

References
----------
A. Bilas, D. Jiang, Y. Zhou and J. P. Singh, "Limits to the performance of software shared
memory: a layered approach", HPCA 1999 (its Tables 2 and 3 for the presets).

See Also
--------
:mod:`calibration.sim.svm` (the simulated cluster's protocol events),
:mod:`calibration.profiles.svm_cluster` (the application values from an HLRC and an SC
run), :mod:`calibration.studies.svm` (the grid and the findings against the paper).
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from mva.errors import ModelError, NumericalWarning
from mva.result import is_unreliable
from mva.modelkind import (ModelSolution, Parameter, ParameterisedModel, choice, integer, real, real_list,
                           table_list, timed)

__all__ = ["SVMCluster", "PARAMETERS", "COMMUNICATION", "PROTOCOL", "message_cycles", "APP_COUNTERS"]

PACKET = 4096
HEADER = 16
#: 4-byte words in a 4 KiB page: an HLRC diff compares them all
PAGE_WORDS = 1024
#: the most of a station's capacity fetches inside critical sections may take (the rest
#: serves the others; the fixed point lengthens the run until the load fits)
BACKGROUND_LIMIT = 0.95
#: the fixed point's step: whole at first, halved whenever a round changes more than the
#: one before, down to RELAX_MIN (the plain iteration can alternate between two states)
RELAX, RELAX_MIN = 1.0, 0.15
#: rounds of the fixed point, and the cap beyond them while each round contracts: LU's
#: second group at HLRC AB contracts by 3% a round and settles in 290
MAX_ROUNDS, MAX_ROUNDS_CONTRACTING = 200, 1000
#: the fixed point stops when a round changes nothing by more than this (relative); the
#: contention network is solved to the same tolerance
FIXED_POINT_TOL = 1e-6

#: Table 2 (cycles; ``transfer`` = cycles per byte = 1 / I/O bus bandwidth), link latency 20
COMMUNICATION = {
    "A": {"host_overhead": 600.0, "ni_occupancy": 1000.0, "transfer": 1 / 0.5, "message_handling": 200.0,
          "link_latency": 20.0},
    "H": {"host_overhead": 300.0, "ni_occupancy": 500.0, "transfer": 1 / 1.25, "message_handling": 100.0,
          "link_latency": 20.0},
    "B": {"host_overhead": 0.0, "ni_occupancy": 0.0, "transfer": 1 / 2.0, "message_handling": 0.0,
          "link_latency": 20.0},
    "W": {"host_overhead": 1200.0, "ni_occupancy": 2000.0, "transfer": 1 / 0.25, "message_handling": 400.0,
          "link_latency": 20.0},
    "B+": {"host_overhead": 0.0, "ni_occupancy": 0.0, "transfer": 1 / 4.0, "message_handling": 0.0,
           "link_latency": 0.0},
}
#: Table 3 (cycles): per page, per word compared / diffed / applied, per page, per handler, per notice
PROTOCOL = {
    "O": {"page_protection": 50.0, "diff_compare": 10.0, "diff_word": 10.0, "diff_apply": 10.0, "twin": 10000.0,
          "handler": 100.0, "notice": 20.0},
    "H": {"page_protection": 25.0, "diff_compare": 5.0, "diff_word": 5.0, "diff_apply": 5.0, "twin": 5000.0,
          "handler": 50.0, "notice": 10.0},
    "B": {"page_protection": 0.0, "diff_compare": 0.0, "diff_word": 0.0, "diff_apply": 0.0, "twin": 0.0,
          "handler": 0.0, "notice": 0.0},
}
#: the node's own protocol actions: each counter and the Table 3 cost it pays per count
PROTOCOL_COST = {"protections": "page_protection", "twins": "twin", "compared_words": "diff_compare",
                 "diff_words": "diff_word", "notices": "notice"}
#: their shares inside critical sections (the lock holder's own protocol work: notices at
#: the acquire, protections and twins inside, diffs at the release)
CS_PROTOCOL = tuple(f"cs_{k}" for k in PROTOCOL_COST)
#: counters a model file may leave out (files written before the machine counted them):
#: zero on every node
OPTIONAL_COUNTERS = ("acks", *CS_PROTOCOL, "cs_lock_messages", "forwarded", "local_requests", "cs_acks",
                     "cs_forwarded", "cs_local_requests", "burst_ahead", "cs_served", "ack_writes", "migratory",
                     "cs_migratory", "migratory_gap", "concurrent", "colliding", "first_acquires", "burst_busy",
                     "burst_requests")
#: the simulator's per-node counters the model reads (``hlrc.busy``, ``sc.requests`` ...)
APP_COUNTERS = ("busy", "requests", "reply_bytes", "served", "oneway", "oneway_bytes", "received",
                "applied_words", "protections", "twins", "compared_words", "diff_words", "notices", "acquires",
                "lock_messages", "cs_busy", "cs_requests", "barriers", *OPTIONAL_COUNTERS)
PURPOSES = ("busy", "data_wait", "lock", "barrier", "protocol")
#: the data waits per request (cycles) at which a profile sums each barrier phase's slowest
#: node (``hlrc.phase_max_by_wait``): 0 and 1, 2, 5 a decade from 100 to 1,000,000, fine
#: enough that the chord between two (the sum is convex in the wait) stays close
PHASE_WAIT_GRID = (0.0, *(m * 10.0 ** e for e in range(2, 6) for m in (1, 2, 5)), 1e6)
#: what each group of like barrier phases gives (``hlrc.phases``): the counters, phase_max
#: and (optional) phase_max_by_wait
PHASE_KEYS = (*APP_COUNTERS, "phase_max", "phase_max_by_wait")
#: what a named lock (``hlrc.locks``) gives: its shares of the run's outermost critical
#: sections and of what they hold (the ``cs_`` counters, counted to the outermost lock)
LOCK_SHARES = ("sections", "cs_busy", "cs_requests", "cs_forwarded", "cs_local_requests", "cs_acks", "cs_lock_messages",
               *(f"cs_{k}" for k in PROTOCOL_COST), "burst_ahead")
#: shares a named lock may leave out (files written before the machine counted them): 0
OPTIONAL_LOCK_SHARES = ("burst_ahead",)



def message_cycles(nbytes: float, host_overhead: float, ni_occupancy: float, transfer: float, link_latency: float,
                   message_handling: float, handler: float = 0.0, header: float = 0.0) -> float:
    """Unloaded cost of one message of ``nbytes`` bytes of data, in cycles: host overhead
    + NI occupancy per packet of up to 4 KiB of data (at least one) + (``header`` +
    data bytes) x cycles per byte + link latency + message handling (+ a protocol
    ``handler`` for a request) at the receiver."""
    packets = max(1, math.ceil(nbytes / PACKET))
    return (host_overhead + ni_occupancy * packets + (header + nbytes) * transfer + link_latency + message_handling
            + handler)


def _default_app(n=4):
    return {"busy": [1e6] * n, "requests": [100.0] * n, "reply_bytes": [409600.0] * n, "served": [100.0] * n,
            "oneway": [0.0] * n, "oneway_bytes": [0.0] * n, "received": [0.0] * n, "applied_words": [0.0] * n,
            "protections": [200.0] * n, "twins": [0.0] * n, "compared_words": [0.0] * n, "diff_words": [0.0] * n,
            "notices": [0.0] * n, "acquires": [0.0] * n, "lock_messages": [0.0] * n, "cs_busy": [0.0] * n,
            "cs_requests": [0.0] * n, "barriers": [2.0] * n, **dict.fromkeys(OPTIONAL_COUNTERS, ())}


_UNITS = {"busy": "cycles", "reply_bytes": "bytes", "oneway_bytes": "bytes", "cs_busy": "cycles",
          "migratory_gap": "cycles"}
PARAMETERS = (
    Parameter("communication", "A", "", "communication costs: A achievable, H halfway, B best, W worse, B+ "
                                        "(Table 2)", choice(*COMMUNICATION)),
    Parameter("protocol", "O", "", "protocol costs: O original, H halfway, B best (Table 3)", choice(*PROTOCOL)),
    Parameter("coherence", "hlrc", "", "hlrc (page-based SVM) or sc (fine-grained)", choice("hlrc", "sc")),
    *(Parameter(f"scale.{k}", 1.0, "", f"multiplier on the {k.replace('_', ' ')} cost", real(0.0))
      for k in (*COMMUNICATION["A"], *PROTOCOL["O"])),
    *(Parameter(f"{c}.{k}", v, _UNITS.get(k, "count"), f"per node, from the simulator ({c})"
                + (" (optional: none is zero on every node)" if k in OPTIONAL_COUNTERS else ""), real_list(0.0))
      for c in ("hlrc", "sc") for k, v in _default_app().items()),
    *(Parameter(f"{c}.phase_max", 1e6, "cycles", "sum over barrier phases of the slowest node's work", real(0.0))
      for c in ("hlrc", "sc")),
    *(Parameter(f"{c}.phase_max_by_wait", (), "cycles", "sum over barrier phases of the slowest node's work plus "
                "its requests at each data wait of PHASE_WAIT_GRID (optional: empty prices the phases' spread by "
                "their work alone)", real_list(0.0)) for c in ("hlrc", "sc")),
    *(Parameter(f"{c}.unit_bytes", unit, "bytes", "coherence unit of the run (HLRC's page, SC's block)",
                real(1.0)) for c, unit in (("hlrc", 4096.0), ("sc", 64.0))),
    *(Parameter(f"{c}.lock_concentration", 0.0, "", "chance two lock acquires name the same lock", real(0.0, 1.0))
      for c in ("hlrc", "sc")),
    *(Parameter(f"{c}.phases", (), "", "groups of like barrier phases, each a table of the counters above and "
                                       "phase_max, solved one by one (empty: the run's sums)",
                table_list(PHASE_KEYS, "group of barrier phases", (*OPTIONAL_COUNTERS, "phase_max_by_wait")))
      for c in ("hlrc", "sc")),
    *(Parameter(f"{c}.locks", (), "", "locks whose critical sections are their own station, each a table of "
                                      "its shares of the run's " + ", ".join(LOCK_SHARES)
                + " (empty: every lock alike)", table_list(LOCK_SHARES, "named lock", OPTIONAL_LOCK_SHARES))
      for c in ("hlrc", "sc")),
    *(Parameter(f"{c}.other_lock_concentration", 0.0, "", "with named locks: chance two of the other locks' "
                                                         "critical sections name the same lock", real(0.0, 1.0))
      for c in ("hlrc", "sc")),
    Parameter("receive_load", 1, "", "1: the receiving I/O bus carries every message in (a background load on "
                                     "it); 0: only the sender's bus, as the unloaded formula (the SVM machine's "
                                     "--receive-without-bus)", integer(0, 1)),
    Parameter("method", "auto", "", "method for the contention network (auto, linearizer, schweitzer: MVA "
                                    "with non-product-form terms; simulation)",
              choice("auto", "linearizer", "schweitzer", "simulation"), role="solver"),
    Parameter("events", 400000, "events", "simulation events per solve (method simulation)", integer(1000),
              role="solver"),
)


def _residence_share(R, demand, total):
    """Per class, the part of the residences ``R`` (stations x classes) due to ``demand``:
    each station's residence split in proportion to the demands there."""
    share = np.divide(demand, total, out=np.zeros_like(total), where=total > 0)
    return (R * share).sum(axis=0)


def _layers(values):
    comm = {k: v * values[f"scale.{k}"] for k, v in COMMUNICATION[values["communication"]].items()}
    prot = {k: v * values[f"scale.{k}"] for k, v in PROTOCOL[values["protocol"]].items()}
    if values["coherence"] == "sc":     # SC: handlers only (no protection, twins or diffs)
        prot = {k: (v if k == "handler" else 0.0) for k, v in prot.items()}
    return comm, prot


class SVMCluster(ParameterisedModel):
    """Model kind ``svm_cluster`` (module docstring).  Outputs: ``speedup``,
    ``execution_cycles``, ``pram_speedup`` (every cost zero, from the simulator's
    counts), ``breakdown`` {busy, data_wait, lock, barrier, protocol} (cycles, mean over
    nodes), ``hot_node`` (the node whose NI or I/O bus is busiest), ``utilization``
    {ni<j>, bus<j>, cpu<j>}, ``message_cycles`` (an unloaded page or block fetch)."""

    kind = "svm_cluster"
    main_output = "speedup"

    PARAMETERS = PARAMETERS

    def check(self) -> None:
        v = self.values
        for c in ("hlrc", "sc"):
            n = len(v[f"{c}.busy"])
            if n == 0:
                raise ModelError(f"{c}.busy", "the cluster needs at least one node")
            for k in OPTIONAL_COUNTERS:
                if len(v[f"{c}.{k}"]) == 0:
                    v[f"{c}.{k}"] = (0.0,) * n      # a file from before the machine counted it
            for k in APP_COUNTERS:
                if len(v[f"{c}.{k}"]) != n:
                    raise ModelError(f"{c}.{k}", f"needs one value per node ({n}), got {len(v[f'{c}.{k}'])}")
            if sum(v[f"{c}.busy"]) <= 0:
                raise ModelError(f"{c}.busy", "the program does no work (every node's busy cycles are 0)")
            if v[f"{c}.phase_max"] + 1e-9 < max(v[f"{c}.busy"]):
                raise ModelError(f"{c}.phase_max", f"{v[f'{c}.phase_max']:g} is below the largest node's work "
                                                   f"{max(v[f'{c}.busy']):g}: the phases' maxima sum to at least it")
            by_wait = v[f"{c}.phase_max_by_wait"]
            if by_wait and len(by_wait) != len(PHASE_WAIT_GRID):
                raise ModelError(f"{c}.phase_max_by_wait", f"needs one value per wait of PHASE_WAIT_GRID "
                                                           f"({len(PHASE_WAIT_GRID)}), got {len(by_wait)}")
            if by_wait and abs(by_wait[0] - v[f"{c}.phase_max"]) > 1e-6 * max(1.0, v[f"{c}.phase_max"]):
                raise ModelError(f"{c}.phase_max_by_wait", f"its first value {by_wait[0]:g} (no wait) is not "
                                                           f"phase_max {v[f'{c}.phase_max']:g}")
            self._check_parts(c)
        if len(v["hlrc.busy"]) != len(v["sc.busy"]):
            raise ModelError("sc.busy", "HLRC and SC counts must be for the same number of nodes")
        self._check_locks()          # before the groups, which carry the same locks
        self._check_phases()

    def _check_locks(self) -> None:
        """Each named lock's shares between 0 and 1, and no kind shared out beyond the whole."""
        v = self.values
        for c in ("hlrc", "sc"):
            share = real(0.0, 1.0)
            for k, lock in enumerate(v[f"{c}.locks"]):
                for key in LOCK_SHARES:
                    share(f"{c}.locks[{k}].{key}", lock.get(key, 0.0))
            for key in LOCK_SHARES:
                total = sum(lock.get(key, 0.0) for lock in v[f"{c}.locks"])
                if total > 1.0 + 1e-9:
                    raise ModelError(f"{c}.locks", f"the named locks' {key} shares sum to {total:g}, above 1")

    def _check_parts(self, c: str) -> None:
        """Each node's counts of a part of its activity (inside critical sections,
        acknowledgements among received messages) at most the whole."""
        v = self.values
        for i, (a, r) in enumerate(zip(v[f"{c}.acks"], v[f"{c}.received"], strict=False)):
            if a > r:
                raise ModelError(f"{c}.acks[{i}]", f"{a:g} exceeds the messages the node received {r:g} "
                                                   f"(acknowledgements are received one-way messages)")
        parts = (("cs_busy", "busy"), ("cs_requests", "requests"), *((f"cs_{k}", k) for k in PROTOCOL_COST),
                 ("cs_lock_messages", "lock_messages"), ("cs_acks", "acks"), ("forwarded", "requests"),
                 ("local_requests", "requests"), ("cs_forwarded", "forwarded"),
                 ("cs_local_requests", "local_requests"), ("cs_forwarded", "cs_requests"),
                 ("cs_local_requests", "cs_requests"), ("cs_served", "served"), ("ack_writes", "acks"),
                 ("migratory", "requests"), ("cs_migratory", "migratory"), ("cs_migratory", "cs_requests"),
                 ("colliding", "concurrent"))
        for inside, total in parts:
            for i, (cr, r) in enumerate(zip(v[f"{c}.{inside}"], v[f"{c}.{total}"], strict=False)):
                if cr > r:
                    what = "busy cycles" if total == "busy" else total.replace("_", " ")
                    raise ModelError(f"{c}.{inside}[{i}]", f"{cr:g} exceeds the node's {what} {r:g}")
        for i, (f, loc, r) in enumerate(zip(v[f"{c}.forwarded"], v[f"{c}.local_requests"], v[f"{c}.requests"],
                                            strict=False)):
            if f + loc > r:
                raise ModelError(f"{c}.local_requests[{i}]", f"{loc:g} with {f:g} forwarded exceeds the node's "
                                                             f"requests {r:g} (a request is one or the other or neither)")

    def _check_phases(self) -> None:
        """Each group of phases a consistent model of its own, one value per node."""
        v = self.values
        for c in ("hlrc", "sc"):
            for k, group in enumerate(v[f"{c}.phases"]):
                try:
                    self._group(c, group)
                except ModelError as exc:
                    raise ModelError(f"{c}.phases[{k}].{exc.field.partition('.')[2]}", exc.problem) from None
                if len(group["busy"]) != len(v[f"{c}.busy"]):
                    raise ModelError(f"{c}.phases[{k}].busy", f"needs one value per node ({len(v[f'{c}.busy'])})")

    def _group(self, coherence: str, group: dict) -> SVMCluster:
        """The model of one group of phases: the run's settings with the group's counts."""
        return SVMCluster({**self.values, **{f"{coherence}.{k}": group.get(k, ()) for k in PHASE_KEYS},
                           f"{coherence}.phases": ()}, name=self.name)

    def app(self) -> dict:
        """The counters of the selected coherence protocol, as arrays over nodes."""
        c = self.values["coherence"]
        return {k: np.asarray(self.values[f"{c}.{k}"], float) for k in APP_COUNTERS}

    def _lock_stations(self, P: int) -> dict:
        """Each kind of critical-section content (:data:`LOCK_SHARES`) shared over the lock
        stations: one per named lock (``locks``: its own shares), then the other locks'
        rest spread evenly over ``1 / other_lock_concentration`` stations (at most P);
        without named locks, everything over ``1 / lock_concentration`` (P when 0).
        Stations no kind reaches are left out."""
        c = self.values["coherence"]
        named = self.values[f"{c}.locks"]
        if not named:
            K = _even_stations(self.values[f"{c}.lock_concentration"], P)
            return {k: np.full(K, 1.0 / K) for k in LOCK_SHARES}
        own = {k: np.array([lock.get(k, 0.0) for lock in named], float) for k in LOCK_SHARES}
        rest = {k: max(1.0 - v.sum(), 0.0) for k, v in own.items()}
        other = self.values[f"{c}.other_lock_concentration"]
        spread = _even_stations(other, P) if other > 0 else int(any(r > 1e-9 for r in rest.values()))
        share = {k: np.concatenate([own[k], np.full(spread, rest[k] / max(spread, 1))]) for k in LOCK_SHARES}
        used = np.flatnonzero(np.any([v > 0 for v in share.values()], axis=0))
        if used.size == 0:
            used = np.arange(1)
        return {k: v[used] for k, v in share.items()}

    def _demands(self, comm, prot, app, fetch_stretch, arrival_wait=None, section_service=None, fetch_time=None,
                 nested_wait=None):
        """Per-purpose demands: ``D[purpose]`` (stations x classes) and delays ``Z[purpose]``
        (classes), stations ordered cpu, ni, bus (one per node each) then locks.  A fetch
        inside a critical section costs the unloaded :func:`message_cycles` of its request
        and its reply times ``fetch_stretch`` (per node, or nodes x lock stations); the
        work it gives the processors, NIs and I/O buses on its way is ``background``
        (cycles per station over the run), load the other nodes meet there.
        ``section_service``: each lock station's critical section (cycles,
        :meth:`_section_service`) for the bursts after barriers (None: none);
        ``fetch_time``: each node's data wait per request (cycles; None: a round trip's
        unloaded cost), by which it reaches its first lock of a phase;
        ``nested_wait``: the wait of a message arriving at another node's bus inside each
        lock's sections (nodes x lock stations, :func:`_nested_waits`; None: none).  Returns
        D, Z, the number of lock stations, the background per station (cycles), each
        node's mean wait in the bursts (:func:`_lock_bursts`) and ``cs``, the fetches
        inside critical sections alone: ``load``
        (cycles per station, their receiving buses included), ``demand`` (stations x
        nodes, unloaded), ``reach`` (nodes x servers) and ``home`` (per node) the
        fetches that meet each server's bus and their own, ``latency`` (cycles per
        node) and ``lock_share`` (each lock station's share of them), for
        :func:`_lock_stretch`."""
        P = app["busy"].shape[0]
        o, occ, tb, lat, hm = (comm[k] for k in ("host_overhead", "ni_occupancy", "transfer", "link_latency",
                                                 "message_handling"))
        handling = hm + prot["handler"]               # at the receiver of a request
        # where the fetches outside and inside critical sections are served (a file
        # without ``cs_served``: both where all are)
        counted = app["cs_served"].sum() > 0
        inside_served = app["cs_served"] if counted else app["served"]
        outside_served = (app["served"] - app["cs_served"]).clip(0.0) if counted else app["served"]
        share = self._lock_stations(P) if app["acquires"].sum() > 0 else {}
        K = len(share["cs_busy"]) if share else 0
        D = {p: np.zeros((3 * P + K, P)) for p in PURPOSES}
        Z = {p: np.zeros(P) for p in PURPOSES}
        background = {"cs": np.zeros((3 * P + K, P)), "oneway": np.zeros((3 * P + K, P)),
                      "apart": np.zeros((3 * P + K, P)), "barrier": np.zeros((3 * P + K, P))}
        apart = _apart(app, outside_served)
        cpu, ni, bus = slice(0, P), slice(P, 2 * P), slice(2 * P, 3 * P)
        received = np.zeros(P)          # cycles each node's I/O bus spends taking messages in
        # HLRC: the diffs each node sends at the releases of its critical sections (each diff
        # compares a whole page)
        diff_sends_inside = (app["cs_compared_words"] / PAGE_WORDS if K and self.values["coherence"] == "hlrc"
                             else np.zeros(P))
        received_inside = np.zeros(P)   # of which the critical sections' fetches
        reach_cs, home_cs = np.zeros((P, P)), np.zeros(P)
        handlers = np.zeros(P)          # cycles of the handlers of one-way messages received
        # one request's unloaded hop (a forwarded request's third, a nested acquire's message)
        hop = message_cycles(0.0, o, occ, tb, lat, hm, prot["handler"], header=HEADER)
        # a fetch's unloaded round trip, at the run's mean reply
        round_trip_cost = hop + message_cycles(_mean_reply_payload(app), o, occ, tb, lat, 0.0, header=HEADER)
        # a grant passing a lock on: no handler at its receiver, whose bus takes it in too
        grant = message_cycles(0.0, o, occ, tb, lat, 0.0, header=HEADER) + HEADER * tb
        sections = _sections(app)
        travelling, replies = _travelling(app), _reply_payload(app)
        unit = self.values[f"{self.values['coherence']}.unit_bytes"]
        for i in range(P):
            own = np.eye(P)[i]
            others = 1.0 - own
            # where i's requests go: the other nodes, in proportion to the requests each
            # serves, outside and inside critical sections apart
            w = _spread(others, outside_served)
            w_cs = _spread(others, inside_served)

            def send(purpose, at, count, nbytes, i=i, into=D, on_processor=1.0):
                """``count`` messages of ``nbytes`` payload sent from the nodes weighted ``at``:
                host overhead (times ``on_processor``, 0 for a sender with nothing else to
                run), NI occupancy per packet, header and payload over the I/O bus."""
                d = into[purpose]
                d[cpu, i] += count * at * o * on_processor
                d[ni, i] += count * at * occ * max(1, math.ceil(nbytes / PACKET))
                d[bus, i] += count * at * (HEADER + nbytes) * tb

            req = app["requests"][i]
            payload = replies[i]
            # SC: a request at the node's own home with no dirty owner sends no request (only
            # invalidations, below); one the home forwards to a dirty owner takes a third hop.
            # Counted apart inside and outside critical sections: the fetches that travel
            trips_inside = max(app["cs_requests"][i] - app["cs_local_requests"][i], 0.0)
            trips = max(req - app["cs_requests"][i] - (app["local_requests"][i] - app["cs_local_requests"][i]), 0.0)
            travel = travelling[i] / req if req > 0 else 1.0
            # the share of them whose server no other node fetches from meanwhile
            # (:func:`_apart`): served without queueing behind other requesters, a load
            # the others meet there
            queued = trips * (1.0 - apart)
            send("data_wait", own, trips, 0.0)
            send("data_wait", w, queued, payload)
            D["data_wait"][cpu, i] += queued * w * handling
            send("apart", w, trips - queued, payload, into=background)
            background["apart"][cpu, i] += (trips - queued) * w * handling
            Z["data_wait"][i] += (trips * 2 * lat + (app["forwarded"][i] - app["cs_forwarded"][i]) * hop
                                  + (trips - queued) * message_cycles(payload, o, occ, tb, 0.0, hm, prot["handler"],
                                                                      header=HEADER))
            # the third hop of a forwarded request (a delay above; inside critical sections,
            # the lock's): its header crosses the home's bus and the owner's, a load there
            forwards = app["forwarded"][i]
            background["oneway"][bus, i] += forwards * w * HEADER * tb
            received += forwards * w * HEADER * tb
            if arrival_wait is not None:      # the request at its server's bus, the reply at i's
                at_server, at_home = arrival_wait
                Z["data_wait"][i] += trips * (w @ at_server + at_home[i])
            round_trip = hop + message_cycles(payload, o, occ, tb, lat, 0.0, header=HEADER)
            # what the receiving I/O buses take in: the requests' headers at the servers, the
            # replies at i (inside critical sections too), lock and barrier headers, one-way data
            received += (trips * w * HEADER + trips_inside * w_cs * HEADER + app["oneway_bytes"][i] * w) * tb
            received[i] += (trips + trips_inside) * (HEADER + payload) * tb
            # lock messages: one-hop requests handled by the other nodes evenly; those of an
            # acquire nested in a critical section hold the outer lock (below)
            nested = app["cs_lock_messages"][i] if K else 0.0
            lm = app["lock_messages"][i] - nested
            grants = 0.0
            if K and P > 1 and app["lock_messages"][i] > 0:
                # the grant passes the lock from holder to holder: the lock's time, not only
                # the acquirer's (one per acquire that is not nested; unloaded, both buses)
                grants = min(sections[i], lm)
                lm -= grants
                D["lock"][3 * P:, i] += grants * grant * share["sections"]
                # and its header crosses the holder's bus and i's: a load the others meet
                background["oneway"][bus, i] += grants * HEADER * tb * others / (P - 1)
                received[i] += grants * HEADER * tb
            if P > 1:
                send("lock", own, lm, 0.0)
                D["lock"][cpu, i] += lm * handling * others / (P - 1)
                received += lm * HEADER * tb * others / (P - 1)
                Z["lock"][i] += lm * lat
                if arrival_wait is not None:      # each meets the transfers booked at its receiver's bus
                    Z["lock"][i] += (lm + grants) * (others @ arrival_wait[0]) / (P - 1)
            # barriers: to the manager (node 0) and back
            if i != 0:
                nb = app["barriers"][i]
                send("barrier", own, nb, 0.0)
                # the release, unloaded (the ones before it: _release_ladder); the manager
                # sends it while it waits at the barrier itself, so its NI and I/O bus
                # carry it (a load the others meet), not its program's processor
                send("barrier", np.eye(P)[0], nb, 0.0, into=background, on_processor=0.0)
                Z["barrier"][i] += nb * message_cycles(0.0, o, occ, tb, 0.0, 0.0, header=HEADER)
                D["barrier"][0, i] += nb * handling
                received[[0, i]] += nb * HEADER * tb
                Z["barrier"][i] += nb * 2 * lat
                if arrival_wait is not None:      # at the manager's bus, and the release at i's
                    Z["barrier"][i] += nb * (arrival_wait[0][0] + arrival_wait[1][i])
            # one-way messages (diffs, invalidations, acknowledgements, write-backs): nobody
            # waits for their NI and I/O bus, a load the others meet; their host overhead is
            # the program's under HLRC (diffs sent at a synchronisation point), handler work
            # under SC (the home's and the sharers' handlers send them)
            ow = app["oneway"][i]
            if ow > 0:
                send("oneway", own, ow, app["oneway_bytes"][i] / ow - HEADER, into=background)
                if self.values["coherence"] == "hlrc":
                    # less the sends of the release's diffs inside critical sections (below)
                    D["protocol"][i, i] += max(background["oneway"][i, i] - diff_sends_inside[i] * o, 0.0)
                    background["oneway"][i, i] = 0.0
            # SC: a write waits for its sharers' acknowledgements, and a migratory one for its
            # home to take the write-back in first (delays: their queueing is not modelled)
            ack_wait, writeback_wait = _write_waits(app, i, travel, payload, unit, comm, handling)
            Z["data_wait"][i] += ((app["acks"][i] - (app["cs_acks"][i] if K else 0.0)) * ack_wait
                                  + (app["migratory"][i] - (app["cs_migratory"][i] if K else 0.0)) * writeback_wait)
            # the node's own work and protocol actions, and the handlers of what it receives
            D["busy"][i, i] += app["busy"][i] - app["cs_busy"][i]
            protocol_work = sum(app[k][i] * prot[cost] for k, cost in PROTOCOL_COST.items())
            inside_cs = sum(app[f"cs_{k}"][i] * prot[cost] for k, cost in PROTOCOL_COST.items()) if K else 0.0
            D["protocol"][i, i] += protocol_work - inside_cs
            # the handlers of the one-way messages it receives (acknowledgements have none)
            # interrupt its program, which nobody waits for: a load on its processor
            handlers[i] += ((app["received"][i] - app["acks"][i]) * handling
                            + app["applied_words"][i] * prot["diff_apply"])
            # critical sections at the lock stations: work plus fetches at their current response
            if K:
                # the holder's protocol work inside (notices, twins, the release's diffs)
                # holds the lock as its work does (Bilas et al. sec. 4.4: it dilates
                # critical sections)
                for k, cost in PROTOCOL_COST.items():
                    D["protocol"][3 * P:, i] += app[f"cs_{k}"][i] * prot[cost] * share[f"cs_{k}"]
                # and, under HLRC, the host overhead of sending those diffs, which the
                # release pays before it passes the lock on
                D["protocol"][3 * P:, i] += diff_sends_inside[i] * o * share["cs_compared_words"]
                D["busy"][3 * P:, i] += app["cs_busy"][i] * share["cs_busy"]
                # the fetches inside: those at the node's own home travel nowhere, those
                # forwarded to a dirty owner (the last holder's data, often) take a third hop
                D["data_wait"][3 * P:, i] += fetch_stretch[i] * (
                    (app["cs_requests"][i] * share["cs_requests"] - app["cs_local_requests"][i]
                     * share["cs_local_requests"]).clip(0.0) * round_trip
                    + app["cs_forwarded"][i] * share["cs_forwarded"] * hop)
                # an SC write inside waits for its acknowledgements holding the lock
                D["data_wait"][3 * P:, i] += app["cs_acks"][i] * ack_wait * share["cs_acks"]
                # and a migratory write inside for the write-back, where its forwarded read is
                D["data_wait"][3 * P:, i] += app["cs_migratory"][i] * writeback_wait * share["cs_forwarded"]
                # a nested acquire's messages hold the outer lock, and meet the queues the
                # node's fetches meet and, as every lock message, the transfers booked at
                # their receiver's bus (but for the outer lock's own sections' fetches)
                arriving = 0.0 if nested_wait is None else nested_wait[i]
                D["lock"][3 * P:, i] += nested * (hop * fetch_stretch[i] + arriving) * share["cs_lock_messages"]
                send("cs", own, trips_inside, 0.0, into=background)
                send("cs", w_cs, trips_inside, payload, into=background)
                background["cs"][cpu, i] += trips_inside * w_cs * handling
                received_inside += trips_inside * w_cs * HEADER * tb
                received_inside[i] += trips_inside * (HEADER + payload) * tb
                reach_cs[i], home_cs[i] = trips_inside * w_cs, trips_inside
        # acquires that follow a barrier meet at the locks at once
        if K and section_service is not None:
            # a node reaches its first lock after its requests, each at its data wait (the
            # first round: a round trip's unloaded cost)
            burst = _lock_bursts(app, share, section_service,
                                 np.full(P, round_trip_cost) if fetch_time is None else fetch_time)
            first_hold = _unqueue_first_sections(app, sections, D, Z, P)
        else:
            burst, first_hold = np.zeros(P), np.zeros(K)
        Z["lock"] += burst
        load = sum(background.values())[:3 * P].sum(axis=1)
        load[cpu] += handlers
        cs_load = background["cs"][:3 * P].sum(axis=1)
        if self.values["receive_load"]:
            load[bus] += received
            cs_load[bus] += received_inside
        # each lock station's share of the travelling fetches inside: the part of their load
        # its own fetches make, which they do not queue behind (_lock_stretch)
        travelling = (app["cs_requests"].sum() * share["cs_requests"]
                      - app["cs_local_requests"].sum() * share["cs_local_requests"]).clip(0.0) if K else np.zeros(0)
        lock_share = travelling / travelling.sum() if travelling.sum() > 0 else travelling
        cs = {"load": cs_load, "demand": background["cs"][:3 * P], "reach": reach_cs, "home": home_cs,
              "latency": home_cs * 2 * lat, "lock_share": lock_share, "first_hold": first_hold}
        return D, Z, K, load, burst, cs

    def network(self, D, Z, K, P, cycles, wait=None, background=None):
        """The contention network, class i's demands per one of its ``cycles[i]``
        message-sized cycles (a simulation then serves message-sized visits, not the
        whole run).  ``wait``: each node's barrier wait, a delay, so every node runs at
        the slowest one's pace as a barrier-synchronised program does.  ``background``:
        each processor's, NI's and I/O bus's utilisation by fetches inside critical
        sections (timed at the lock stations), and then each lock station's by the
        phases' first sections (timed in the bursts), which leaves the others the rest of
        its capacity: their demands there are divided by 1 - background (the reduced-capacity
        treatment of a load served apart, as in the shadow server of Sevcik, "Priority
        scheduling disciplines in queueing network models of computer systems", IFIP
        1977).  The NIs, I/O buses and locks serve in order with constant service (a
        message of a given size always takes the same time), so the network is not
        product form; MVA solves it with the FCFS and residual-time terms of
        :mod:`mva.nonproduct`."""
        from mva import Network, Station

        total = sum(D.values()) / cycles
        if background is not None:
            total = total.copy()
            total[:background.size] /= (1.0 - background)[:, None]
        scv = 0.0
        names = ([f"cpu{j}" for j in range(P)] + [f"ni{j}" for j in range(P)] + [f"bus{j}" for j in range(P)]
                 + [f"lock{k}" for k in range(K)])
        # processors share among what they run; NIs, buses and locks serve in order
        stations = [Station(name, "queue", tuple(float(x) for x in total[m]), discipline="ps" if m < P else "fcfs",
                            scv=1.0 if m < P else scv) for m, name in enumerate(names)]
        think = (sum(Z.values()) + (0.0 if wait is None else wait)) / cycles
        # a node with nothing to do in a group of phases (no demand, and no barrier wait
        # yet: the first round) takes no part in its network
        present = tuple(int(total[:, i].sum() > 0 or think[i] > 0) for i in range(P))
        return Network(tuple(stations), classes=tuple(f"node{i}" for i in range(P)), population=present,
                       think_time=tuple(float(z) for z in think))

    @timed
    def solve(self) -> ModelSolution:
        v = self.values
        groups = v[f"{v['coherence']}.phases"]
        # the lock stations' sections from the run's counts, for every group alike
        service = self._section_service()
        if groups:
            return self._solve_groups(groups, service)
        return self._solve_run(service)

    def _section_service(self) -> np.ndarray | None:
        """Each lock station's mean critical section over the run (cycles): its demands
        unloaded (fetches inside at their unloaded cost, the grant that passes the lock
        on included) over its outermost sections (the
        acquires not nested: ``acquires`` less the nested share of ``lock_messages``).
        From the run's counts even for a group of phases, whose mix of locks the shares
        (the run's) do not describe: a long section every node takes once a frame
        (Volrend) falls in a few phases.  None without locks."""
        comm, prot = _layers(self.values)
        app = self.app()
        P = app["busy"].shape[0]
        D, _, K, *_ = self._demands(comm, prot, app, np.ones(P))
        if K == 0:
            return None
        sections = _sections(app).sum() * self._lock_stations(P)["sections"]
        demand = sum(D[q][3 * P:].sum(axis=1) for q in PURPOSES)
        return np.divide(demand, sections, out=np.zeros(K), where=sections > 0)

    def _solve_groups(self, groups, section_service) -> ModelSolution:
        """Each group of like barrier phases solved as its own network [REC]: barriers keep
        the phases apart, so a message queues only with those of its own phase; the
        execution time is the groups' summed, as are the breakdowns."""
        v = self.values
        parts = [self._group(v["coherence"], g)._solve_run(section_service) for g in groups]
        execution = sum(p.outputs["execution_cycles"] for p in parts)
        sequential = float(sum(v[f"{v['coherence']}.busy"]))
        weights = [p.outputs["execution_cycles"] / execution for p in parts]
        # over the run; a group may lack a station (a lock its phases never take)
        names = dict.fromkeys(n for p in parts for n in p.outputs["utilization"])
        util = {n: sum(w * p.outputs["utilization"].get(n, 0.0) for w, p in zip(weights, parts, strict=True))
                for n in names}
        heaviest = parts[int(np.argmax(weights))]
        outputs = {
            "speedup": sequential / execution,
            "execution_cycles": execution,
            "pram_speedup": sequential / max(v[f"{v['coherence']}.phase_max"], 1e-300),
            "breakdown": {k: sum(p.outputs["breakdown"][k] for p in parts) for k in PURPOSES},
            "hot_node": heaviest.outputs["hot_node"],
            "message_cycles": heaviest.outputs["message_cycles"],
            "utilization": util,
        }
        # each group's reason once, the stations the approximation treats (alike in every
        # group) once after them: the groups' full messages repeat a long list per group
        reasons, stations = [], ""
        for k, p in enumerate(parts):
            if p.message:
                head, sep, tail = p.message.partition("; approximate: ")
                reasons.append(f"group {k + 1} of {len(parts)}: {head}")
                stations = stations or (sep + tail if sep else "")
        return ModelSolution(model=self.name or "svm_cluster", kind=self.kind, outputs=outputs,
                             converged=all(p.converged for p in parts), doubted=any(p.doubted for p in parts),
                             iterations=sum(p.iterations for p in parts),
                             message="; ".join(reasons) + stations, units=parts[0].units,
                             extras={"groups": parts})

    def _solve_run(self, section_service) -> ModelSolution:
        """The run (or a group of phases) as one network; ``section_service``: the lock
        stations' critical sections for the bursts (:meth:`_section_service`, the run's;
        None: no locks)."""
        from mva import solve

        v = self.values
        comm, prot = _layers(v)
        app = self.app()
        P = app["busy"].shape[0]
        # the class's visits: messages it waits for (one-way messages are a load, not visits;
        # counting them made a class that sends many cycle far faster than the others, a
        # stiff network the approximate MVA did not settle on)
        cycles = np.maximum(1.0, app["requests"] + app["lock_messages"] + app["barriers"])
        busy = app["busy"]
        imbalance_work = max(v[f"{v['coherence']}.phase_max"] - busy.max(), 0.0)
        by_wait = np.asarray(v[f"{v['coherence']}.phase_max_by_wait"], float)
        ladder = _release_ladder(app, comm)

        def timing(R, Z, burst, data_wait):
            """Each node's time without barrier waits, and the execution time (``burst``:
            each node's mean wait at the locks right after barriers, :func:`_lock_bursts`,
            by which the phases' slowest node is the expected one of
            :func:`_slowest_after_bursts`; ``data_wait``: each node's, cycles)."""
            T = np.asarray(R.sum(axis=0), float) + sum(Z.values())
            if by_wait.size and app["requests"].sum() > 0:
                hidden = _hidden_spread(T, busy, app["requests"], data_wait, by_wait)
            else:
                # the work-weighted slowdown: a node with almost no work (a program that
                # leaves some processes idle) would make a plain mean of T / busy explode
                hidden = imbalance_work * float(T.sum() / max(busy.sum(), 1e-300))
            # the phases' work spread and the releases' ladder, taken as independent
            # spreads of the slowest node's arrival (_release_ladder)
            return T, float(_slowest_after_bursts(T, burst) + math.hypot(hidden, ladder))

        fp = self._fixed_point(comm, prot, app, cycles, timing, section_service)
        D, Z, K, net, r, R = fp["D"], fp["Z"], fp["K"], fp["net"], fp["r"], fp["R"]
        if v["method"] == "simulation":
            net = self.network(D, Z, K, P, cycles, wait=fp["wait"], background=fp["background"])
            r = solve(net, method="simulation", events=v["events"], seed=1)
            R = np.asarray(r.residence_time, float) * cycles
        parts = _breakdown(R, D, Z, K, P)
        T, execution = timing(R, Z, fp["burst"], parts["data_wait"])
        parts["barrier"] += execution - T
        util = np.asarray(r.station_utilization(), float)
        names = [s.name for s in net.stations]
        comm_util = util[P:3 * P].reshape(2, P).max(axis=0)
        costs = [comm[k] for k in ("host_overhead", "ni_occupancy", "transfer", "link_latency")]
        payload = _mean_reply_payload(app)
        fetch = (message_cycles(0.0, *costs, comm["message_handling"], prot["handler"], header=HEADER)
                 + message_cycles(payload, *costs, 0.0, header=HEADER))
        sequential = float(busy.sum())
        outputs = {
            "speedup": sequential / execution,
            "execution_cycles": execution,
            "pram_speedup": sequential / max(v[f"{v['coherence']}.phase_max"], 1e-300),
            "breakdown": {p: float(parts[p].mean()) for p in PURPOSES},
            "hot_node": int(np.argmax(comm_util)),
            "message_cycles": fetch,
            "utilization": {n: float(u) for n, u in zip(names, util, strict=True)},
        }
        message = "" if fp["converged"] else f"fixed point (critical sections, barrier waits) did not converge " \
                                             f"(change {fp['change']:.2g})"
        doubted = False
        if fp["accuracy"] and fp["accuracy"] != "exact" and v["method"] != "simulation":
            message = (message + "; " if message else "") + f"contention network by {r.method}: {fp['accuracy']}"
            doubted = is_unreliable(fp["accuracy"])
        units = {"execution_cycles": "cycles", "breakdown": "cycles", "message_cycles": "cycles"}
        return ModelSolution(model=self.name or "svm_cluster", kind=self.kind, outputs=outputs,
                             converged=fp["converged"], iterations=fp["iterations"], message=message, units=units,
                             doubted=doubted,
                             extras={"node_cycles": T, "parts": parts, "result": r})

    def _fixed_point(self, comm, prot, app, cycles, timing, section_service=None) -> dict:
        """The critical-section stretch and each node's barrier wait, iterated with the
        contention network until both settle (at most ``MAX_ROUNDS`` rounds, or
        ``MAX_ROUNDS_CONTRACTING`` while each round contracts; each round's Linearizer
        starts from the last round's corrections): the last demands
        ``D``, ``Z``, locks ``K``, network ``net``, its solution ``r`` and residences
        ``R`` (cycles), the wait, and whether and how it converged.  A simulation serves
        the demands of the converged MVA fixed point (its own estimates are too noisy
        to iterate on), so the two differ only in contention."""
        from mva import solve

        method = self.values["method"]
        analytic = "auto" if method == "simulation" else method
        P = app["busy"].shape[0]
        stretch, wait, arrival, fetch_time = np.ones((P, 1)), np.zeros(P), np.zeros((2, P)), None
        nested = np.zeros((P, 1))
        # the bursts follow each node's data wait only where the file counts when the
        # nodes reach their first locks
        arrivals = section_service is not None and app["first_acquires"].sum() > 0
        background = None
        receiving = bool(self.values["receive_load"])
        iterations, converged, change, accuracy, r = 0, False, math.inf, "", None
        relax, previous, population = RELAX, math.inf, None
        for iterations in range(1, MAX_ROUNDS_CONTRACTING + 1):  # noqa: B007 (the count is reported)
            D, Z, K, inside, burst, cs = self._demands(comm, prot, app, stretch, arrival if receiving else None,
                                                      section_service, fetch_time, nested if receiving else None)
            if background is None:
                background = np.zeros(3 * P + K)
            net = self.network(D, Z, K, P, cycles, wait=wait, background=background)
            with warnings.catch_warnings():
                # every round would warn; the last round's accuracy goes into the message
                warnings.simplefilter("ignore", NumericalWarning)
                if r is not None and r.method == "linearizer" and net.population == population:
                    # the last round's corrections start this one's (the demands moved little;
                    # an idle node joins once it has a barrier wait, and then starts afresh)
                    r = solve(net, method="linearizer", tol=FIXED_POINT_TOL, start=r)
                else:
                    r = solve(net, method=analytic, tol=FIXED_POINT_TOL)
            population = net.population
            accuracy = r.accuracy
            R = np.asarray(r.residence_time, float) * cycles
            total = sum(D.values())
            waited = _breakdown(R, D, Z, K, P)["data_wait"]
            T, execution = timing(R, Z, burst, waited)
            if arrivals and K:
                # each node's data wait per request, by which it reaches its first lock of a phase
                new_fetch = np.divide(waited, app["requests"], out=np.zeros(P), where=app["requests"] > 0)
                fetch_time = new_fetch if fetch_time is None else fetch_time + relax * (new_fetch - fetch_time)
            bus_cycles = total[2 * P:3 * P].sum(axis=1) + inside[2 * P:3 * P]
            # response of a fetch inside a critical section = unloaded cost scaled by the
            # queueing the data stations show
            rows = slice(0, 3 * P)
            alone = _alone_arrival_waits(app, cs, bus_cycles, execution, comm["transfer"]) if K and receiving else None
            new = _lock_stretch(R[rows], total[rows], background[rows], inside, cs, alone) if K else stretch
            new_nested = _nested_waits(alone, P) if alone is not None else nested
            new_wait = execution - T
            # the critical sections' fetches spread over the run, and the phases' first
            # sections (which wait in the bursts) holding their locks: loads the others meet;
            # relaxed, because a longer run dilutes the load that lengthened it (the plain
            # iteration can oscillate)
            target = np.minimum(np.concatenate([inside, cs["first_hold"]]) / execution, BACKGROUND_LIMIT)
            new_background = background + relax * (target - background)
            miss = float(np.max(np.abs(target - background)))
            if receiving:
                new_arrival = np.array(_arrival_waits(app, bus_cycles, execution, comm["transfer"]))
                # the run's share the waits moved by
                miss = max(miss, float(np.max(np.abs(new_arrival - arrival).sum(axis=0) * app["requests"])) / execution)
                arrival = arrival + relax * (new_arrival - arrival)
            # the stretch only matters where critical sections hold fetches (lock stations)
            change = max(float(np.max(np.abs(new - stretch) / stretch)) if K else 0.0,
                         float(np.max(np.abs(new_wait - wait))) / execution,
                         miss)
            # damped as the background: the stretch, the barrier waits and the run's length
            # feed each other through the lock stations and can alternate between two
            # states otherwise; the step shrinks only once a round stops contracting (a
            # fixed 0.3 step took 40 rounds a group where most need 10-20)
            stretch = stretch + relax * (new - stretch) if K else stretch
            nested = nested + relax * (new_nested - nested)
            wait, background = wait + relax * (new_wait - wait), new_background
            if change >= previous:
                if iterations >= MAX_ROUNDS:
                    break
                relax = max(relax * 0.5, RELAX_MIN)
            previous = change
            if change < FIXED_POINT_TOL:
                converged = True
                break
        return {"D": D, "Z": Z, "K": K, "net": net, "r": r, "R": R, "wait": wait, "background": background, "burst": burst,
                "iterations": iterations, "converged": converged, "change": change, "accuracy": accuracy}


def _travelling(app: dict) -> np.ndarray:
    """Each node's requests that travel (and get a reply): its requests less those at its
    own home with no dirty owner (``local_requests``, SC), which send none."""
    return (app["requests"] - app["local_requests"]).clip(0.0)


def _reply_payload(app: dict) -> np.ndarray:
    """Each node's mean reply payload (bytes): its reply bytes over its requests that
    travel (:func:`_travelling`) [REC: over all requests, Ocean's replies at SC were 57% of
    their 64 B, 43% of its requests being local]."""
    trips = _travelling(app)
    return np.divide(app["reply_bytes"], trips, out=np.zeros_like(trips), where=trips > 0)


def _mean_reply_payload(app: dict) -> float:
    """The run's mean reply payload (bytes) over the requests that travel (:func:`_reply_payload`)."""
    trips = float(_travelling(app).sum())
    return float(app["reply_bytes"].sum()) / trips if trips > 0 else 0.0


def _sections(app: dict) -> np.ndarray:
    """Each node's outermost critical sections: its acquires less those nested inside a
    section (the share of its lock messages sent inside one)."""
    nested = np.divide(app["cs_lock_messages"], app["lock_messages"], out=np.zeros_like(app["acquires"]),
                       where=app["lock_messages"] > 0)
    return app["acquires"] * (1.0 - nested)


def _even_stations(concentration: float, P: int) -> int:
    """Lock stations visited evenly for a ``concentration`` (the chance two acquires name
    one lock): its inverse, rounded, between 1 and ``P`` (``P`` when 0)."""
    return int(min(P, max(1, round(1.0 / concentration)))) if concentration > 0 else P


def _lock_bursts(app: dict, share: dict, section_service, fetch_time=None):
    """The lock waits of each phase's first acquires (cycles, per node).  A barrier
    releases every node at once and they reach their first critical section of the
    phase together (as the reductions of Ocean and
    Water and Volrend's once-a-frame lock do), not spread over the phase as the
    contention network assumes.  The machine counts, for each node's first acquire of a
    phase, the first acquires of the same lock in that phase before it
    (``burst_ahead``; per lock its share of them, ``share["burst_ahead"]`` over the lock
    stations): served in turn, a node waits for each of them a critical section of that
    lock and the grant that passes it on (``section_service``, per station:
    :meth:`SVMCluster._section_service`).  The last of a burst of m waits (m - 1) S, twice the
    mean, and the barrier after waits for the slowest node: the expected one over the
    orders the burst can take (:func:`_slowest_after_bursts`) [REC: the arrivals taken as
    simultaneous; the machine's count replaces the chance 1 + (n - 1) c, from the run's lock
    concentration c, that the old form took for the nodes a lock meets, and the mean
    critical section of every lock, which missed a long section every node takes once a
    frame; and the grant, already the lock's time, no longer counted twice].  A file that
    counts how far into its phase each first acquire comes (``first_acquires``,
    ``burst_busy``, ``burst_requests``) with ``fetch_time``, each node's data wait per
    request (cycles): the nodes reach the lock at their own times, and each lock's
    section counts only by the share of the simultaneous wait that survives
    (:func:`_burst_survives`), the nodes taken in the order they come, ties in the
    order without costs (``burst_ahead`` over ``first_acquires``, the mean place)."""
    ahead = app["burst_ahead"]
    if not ahead.any():
        return np.zeros_like(app["acquires"])
    service = np.asarray(section_service, float)
    if fetch_time is not None and app["first_acquires"].sum() > 0:
        # when each node reaches its first lock: its work and its requests (at their
        # current data wait) since it left the barrier, a mean over its bursts
        first = app["first_acquires"]
        on = first > 0
        reach = (app["burst_busy"][on] + app["burst_requests"][on] * np.asarray(fetch_time, float)[on]) / first[on]
        place = ahead[on] / first[on]
        service = service * np.array([_burst_survives(reach, place, s) for s in service])
    return ahead * float((share["burst_ahead"] * service).sum())


def _burst_survives(reach, position, section: float) -> float:
    """The share of a simultaneous burst's lock wait that nodes reaching the lock at
    ``reach`` (cycles after the barrier) still wait, each holding it ``section`` cycles:
    served in the order they come (ties in the order of ``position``, their mean place
    in the burst without costs), a D/D/1 queue, the k-th waiting w_k = max(0, w_(k-1) +
    section - (reach_k - reach_(k-1))) (Lindley, "The theory of queues with a single
    server", Proc. Cambridge Phil. Soc. 1952), over the (m - 1) m / 2 sections the m
    would wait together.  1 when they come together, 0 when each comes after the one
    before has left."""
    m = reach.size
    if m < 2 or section <= 0:
        return 1.0
    order = np.lexsort((position, reach))
    gaps = np.diff(reach[order])
    wait, total = 0.0, 0.0
    for gap in gaps:
        wait = max(0.0, wait + section - gap)
        total += wait
    return total / (section * m * (m - 1) / 2)


def _unqueue_first_sections(app: dict, sections, D: dict, Z: dict, P: int) -> np.ndarray:
    """The first acquires of a phase wait in the burst (:func:`_lock_bursts`), not in the
    contention network's lock queues as well: their share of each node's sections
    (``first_acquires`` over its outermost sections) holds the lock unqueued, moved from
    the lock stations' demands (``D``, rows from 3P) to the node's delays ``Z``, purpose
    by purpose.  Returns what moved per lock station (cycles): the hold the other
    acquires still meet there (a background load in :meth:`SVMCluster._fixed_point`).
    Nothing moves for a file without the count."""
    first = app["first_acquires"]
    held = np.zeros(D["busy"].shape[0] - 3 * P)
    if first.sum() <= 0:
        return held
    alone = np.divide(np.minimum(first, sections), sections, out=np.zeros(P), where=sections > 0)
    for p in PURPOSES:
        held += (D[p][3 * P:] * alone).sum(axis=1)
        Z[p] += alone * D[p][3 * P:].sum(axis=0)
        D[p][3 * P:] *= 1.0 - alone
    return held


def _write_waits(app: dict, i: int, travel: float, payload: float, unit: float, comm: dict,
                 handling: float) -> tuple[float, float]:
    """Node ``i``'s SC write waits (cycles): per acknowledgement (:func:`_ack_wait`, k
    its ``acks`` over ``ack_writes``) and per migratory write (:func:`_writeback_wait`,
    after its mean ``migratory_gap``); 0 where it has none."""
    acks, migratory = app["acks"][i], app["migratory"][i]
    fanout = acks / app["ack_writes"][i] if app["ack_writes"][i] > 0 else 1.0
    return (_ack_wait(fanout, travel, payload, comm, handling) if acks > 0 else 0.0,
            _writeback_wait(app["migratory_gap"][i] / migratory, unit, comm, handling) if migratory > 0 else 0.0)


def _ack_wait(fanout: float, travel: float, payload: float, comm: dict, handling: float) -> float:
    """An SC write's wait for its sharers' acknowledgements, per acknowledgement (cycles),
    as the machine sends them (unloaded).  The write's home handles the request and sends
    its k = ``fanout`` invalidations (a host overhead each, in the handler, before any
    leaves) and then its answer: they cross its I/O bus and NI one after another, spaced
    by the slower of the two (a header's transfer x, the occupancy); each sharer handles
    its invalidation (``handling`` and the acknowledgement's overhead) and sends an
    acknowledgement, all in parallel; the writer's bus takes the acknowledgements and the
    answer in as they arrive.  Beyond the answer the round trip already counts
    (``payload`` bytes), a remote write waits k o and the later of the answer (behind
    the invalidations) and the last acknowledgement, or, where the answer would arrive
    among the acknowledgements with no gap between them to take it in (BB), the last
    acknowledgement and then the answer; a write at its own home (a share 1 -
    ``travel`` of them) has no answer, only k o and the last acknowledgement.  k is the
    node's mean, ``acks`` over ``ack_writes``.  On a quiet cluster this is the machine's
    wait to the cycle at AO and at BB (tests) [REC: priced as a whole trip after the
    answer per acknowledgement, the model was 12.5% pessimistic on the held-out
    Water-Spatial at SC AO, whose writes at their own home wait for ten sharers in some
    phases, with it 6.3%; Raytrace at SC AO went from 11% to 8% optimistic and at SC BB
    from 30% to 24%; alone, it took the tuning Ocean at SC AO from 8.6% to 10.4%
    pessimistic]."""
    o, occ, tb, lat = (comm[k] for k in ("host_overhead", "ni_occupancy", "transfer", "link_latency"))
    k = fanout
    x, answer_bytes = HEADER * tb, (HEADER + payload) * tb
    first = x + occ                                   # the first invalidation leaves the home's NI
    last_sent = first + (k - 1) * max(x, occ)
    to_ack = 2 * lat + handling + o + x + occ         # on to its sharer and back as an acknowledgement
    last_ack = last_sent + to_ack
    local = k * o + last_ack
    answer = max(k * x + answer_bytes, last_sent) + occ + lat
    done = max(answer, last_ack)
    # the writer's bus takes each message in as it arrives; an answer that would overlap
    # the acknowledgements, with no gap between them to take it, goes in after the last
    first_in = first + to_ack - x
    if first_in < answer and answer - answer_bytes < last_ack and max(x, occ) - x < answer_bytes:
        done = max(done, last_ack + answer_bytes)
    remote = k * o + done - (answer_bytes + occ + lat)
    return (travel * remote + (1 - travel) * local) / k


def _writeback_wait(gap: float, unit: float, comm: dict, handling: float) -> float:
    """A migratory SC write's wait for its home to take in the write-back before its
    request (cycles, unloaded, beyond the round trip already counted): the write follows
    a read the home forwarded to the dirty owner, which sent the data (``unit`` bytes)
    and then the write-back to the home, one after the other through its I/O bus and NI;
    the write's request, sent ``gap`` cycles of the writer's work after the data came in
    (a host overhead, its header through the writer's bus and NI, the link), finds the
    home's bus still taking the write-back in when it arrives before the write-back's
    end, and goes in after it; its handler follows the write-back's (``handling``).
    With the data in at 0, the write-back's end at the home is max(X, occupancy) (X the
    block's transfer with its header): it leaves the owner's bus X after the data, its
    NI an occupancy after the data's.  On a quiet cluster this is the machine's wait to
    the cycle (tests)."""
    o, occ, tb, lat = (comm[k] for k in ("host_overhead", "ni_occupancy", "transfer", "link_latency"))
    x, block = HEADER * tb, (HEADER + unit) * tb
    writeback_end = max(block, occ)
    start = gap + o + occ + lat                        # the request at the home's bus, alone
    arrive = start + x
    if start < writeback_end and arrive > writeback_end - block:
        arrive = writeback_end + x
    return max(arrive, writeback_end + handling) - (start + x)


def _hidden_spread(T, busy, requests, data_wait, by_wait) -> float:
    """The time the phases' own slowest nodes add over the slowest node's total (cycles):
    each node's time as its work stretched by the slowdown outside data waits (``s``,
    the nodes' time less their data waits over their work) plus its requests at the
    nodes' data wait per request (``w``); then the sum over phases of the slowest
    node's, ``s`` x the profile's sum of work plus requests at a wait of ``w / s``
    (``by_wait``, at :data:`PHASE_WAIT_GRID`, linear between them and past the last),
    less the slowest node's totals [REC: ours; a phase whose requests fall unevenly on
    the nodes (Ocean's boundary rows) waits for the node with the most, which the totals
    over the phases average away; with requests in proportion to work it is the work's
    imbalance stretched by the slowdown, as without the sums]."""
    stretch = max(float(T.sum() - data_wait.sum()), 1e-300) / max(float(busy.sum()), 1e-300)
    wait = max(float(data_wait.sum()), 0.0) / float(requests.sum()) / stretch
    grid = np.asarray(PHASE_WAIT_GRID)
    if wait <= grid[-1]:
        phases = float(np.interp(wait, grid, by_wait))
    else:
        phases = float(by_wait[-1] + (wait - grid[-1]) * (by_wait[-1] - by_wait[-2]) / (grid[-1] - grid[-2]))
    return stretch * max(phases - float(np.max(busy + wait * requests)), 0.0)


def _release_ladder(app: dict, comm: dict) -> float:
    """How much later the last node a barrier releases starts its next phase than the
    first, summed over the run's barriers (cycles).  The manager (node 0), once it has
    handled the last arrival, sends the m - 1 releases one after another (the machine's
    rule, :mod:`calibration.sim.svm`): each passes its processor (host overhead o), its
    I/O bus (a header, x) and its NI (occupancy n), a pipeline of deterministic stages
    whose k-th message leaves (k - 1) max(o, x, n) after the first.  The last node
    released waits (m - 2) max(o, x, n) more than the first, m the nodes that take
    barriers (a finished node is not released).  The execution time adds it to the
    phases' work spread as an independent spread of the slowest node's arrival, in
    quadrature [REC: ours.  On 16 nodes doing equal work between 30 barriers the machine
    at AO spends 17,744 cycles a barrier, of which the releases' ladder is 14,000: the
    model was 20% and 12% optimistic at AO with 5,000 and 20,000 cycles a phase, the
    release sends queued with the manager's program (11% and 5% at HO); with the ladder
    within 0.3% (1.1% at HO).  With each node's work a phase spread over 3,000 and
    20,000 cycles more, the larger of the two spreads alone was within 0.5% at 3,000 but
    7.2% optimistic at 20,000 at AO (9.9% at HO); in quadrature within 0.9% and 3.2% at
    AO (0.5% and 4.0% at HO); chosen on those hand cases.  On the recorded Ocean, 935
    barriers, HLRC AO went from 11.6% optimistic to 8.9% (the phases grouped as
    :data:`calibration.profiles.svm_cluster.MAX_PHASE_GROUPS` now allows)]."""
    m = int((app["barriers"] > 0).sum())
    if m < 3:
        return 0.0
    spacing = max(comm["host_overhead"], comm["ni_occupancy"], HEADER * comm["transfer"])
    return float(app["barriers"].max()) * (m - 2) * spacing


def _slowest_after_bursts(T, burst) -> float:
    """The expected time of a barrier phase's slowest node when the nodes meet at a lock
    right after the barrier before (cycles): E[max_i (T_i - b_i + W_i)], with ``T`` each
    node's time, its mean burst wait ``b`` included (:func:`_lock_bursts`), and W_i its
    wait in a random order of the m nodes that burst: the one in position k of 0 .. m-1
    waits 2 b_i k / (m - 1) (k critical sections of b_i / ((m - 1) / 2) each, so b_i on
    average).  Exactly, over the m! orders: the orders with each node i at a position at
    most c_i number prod_k (c_(k) + 1 - k), the limits sorted (the node with the k-th
    smallest limit has c_(k) + 1 positions, k of them taken by those before it), so
    P(max <= t) is that over m! at each t where a node's wait steps.  Equal nodes end at
    T + b (the last waits twice the mean); a node longer than the others by more than
    their bursts ends at its own time, its mean burst wait included."""
    T, burst = np.asarray(T, float), np.asarray(burst, float)
    # a burst below 1e-7 of its node's time changes nothing, and its steps would be lost
    # in the rounding of the node's time (the expected slowest came out below the
    # slowest node's time)
    on = burst > 1e-7 * np.abs(T)
    burst = np.where(on, burst, 0.0)
    before = T - burst
    m = int(on.sum())
    if m < 2:
        return float(T.max())
    floor = float(before[~on].max()) if (~on).any() else -math.inf     # the nodes that do not burst
    step = 2 * burst[on] / (m - 1)
    k = np.arange(m)
    ends = (before[on][:, None] + step[:, None] * k[None, :]).ravel()
    ends = np.unique(np.append(ends[ends >= floor], floor) if math.isfinite(floor) else ends)
    # the highest position each node can take and still end by t (the small slack keeps a
    # node whose position ends exactly at t from falling to the one below by rounding)
    limits = np.floor((ends[:, None] - before[on][None, :]) / step[None, :] + 1e-6)
    limits = np.sort(np.minimum(limits, m - 1), axis=1)
    cdf = np.prod(np.clip((limits + 1 - k) / (m - k), 0.0, None), axis=1)
    return float(np.sum(ends * np.diff(cdf, prepend=0.0)))


def _apart(app: dict, served) -> float:
    """The share of the fetches whose server no other node fetches from at the time:
    1 - c, c (at most 1) the nodes the program has at the same server near the nodes'
    requests (``colliding``, summed over the nodes) over what the model's routing
    expects of the others requesting then (``concurrent``), each of which picks a server
    j with the chance :func:`_spread` gives it, at the server the requester picks.  One
    share for every node: the counts of one node are few and its share alone moved the
    nodes apart in the model, each meeting the barrier at its own pace [REC: ours; a
    staggered all-to-all exchange, where node i fetches from i + 1, i + 2, ... in turn,
    has c near 0, independent routing near 1].  0 where the file lacks the counts."""
    P = served.shape[0]
    if P < 3 or app["concurrent"].sum() <= 0:
        return 0.0
    spread = np.array([_spread(1.0 - np.eye(P)[q], served) for q in range(P)])     # spread[q, j]
    # the chance an other node q (not the requester i, not the server j) picks j, averaged over them
    others = (spread.sum(axis=0)[None, :] - spread - np.diag(spread)[None, :]) / (P - 2)
    expected = float(((spread * others).sum(axis=1) * app["concurrent"]).sum())
    return max(0.0, 1.0 - app["colliding"].sum() / expected) if expected > 0 else 0.0


def _spread(others, served):
    """Where a node's requests go: the other nodes, in proportion to the requests each
    serves (evenly when none does)."""
    weight = others * served
    return weight / weight.sum() if weight.sum() > 0 else others / max(others.size - 1, 1)


def _lock_stretch(R, total, background, load, cs: dict, alone=None) -> np.ndarray:
    """The stretch of the fetches inside each lock's critical sections (nodes x lock
    stations): their response over their unloaded cost, at the stations they visit (the
    nodes that serve them, ``cs_served``, not those that serve the fetches outside).  At
    each station a fetch takes the residence per unit of demand the node's classes show
    there (``R`` over ``total``; where the node has no demand, the other nodes' mean),
    less the load of that lock's own critical sections: the lock lets one holder fetch
    at a time, so they never queue behind each other, only behind the rest.  Without
    the part ``own`` of a station's ``background`` utilisation, a residence there,
    which goes as 1 / (1 - background) in :meth:`SVMCluster.network`, shrinks by
    (1 - background) / (1 - background + own); the arrival waits at the buses
    (``alone``, :func:`_alone_arrival_waits`; None: none) are those of the buses without
    that lock's fetches.  ``load``: each station's background (cycles), ``cs`` the
    critical sections' fetches (:meth:`SVMCluster._demands`)."""
    P, K = R.shape[1], cs["lock_share"].size
    pooled = np.divide(R.sum(axis=1), total.sum(axis=1), out=1.0 / (1.0 - background),
                       where=total.sum(axis=1) > 0)
    ratio = np.where(total > 0, np.divide(R, total, out=np.ones_like(total), where=total > 0), pooled[:, None])
    cs_part = np.divide(cs["load"], load, out=np.zeros_like(load), where=load > 0)
    own = (background * cs_part)[:, None] * cs["lock_share"][None, :]
    scale = (1.0 - background)[:, None] / (1.0 - background[:, None] + own)
    demand = cs["demand"]
    scaled = (demand * ratio).T @ scale
    fixed = np.repeat(cs["latency"][:, None], K, axis=1)
    if alone is not None:
        for k in range(K):
            fixed[:, k] += cs["reach"] @ alone[k][0] + cs["home"] * alone[k][1]
    whole = (demand.sum(axis=0) + cs["latency"])[:, None]
    return np.maximum(np.divide(scaled + fixed, whole, out=np.ones((P, K)), where=whole > 0), 1.0)


def _alone_arrival_waits(app: dict, cs: dict, bus_cycles, execution: float, transfer: float) -> list:
    """For each lock station, the arrival waits (:func:`_arrival_waits`) of the buses
    without the load of that lock's own critical sections' fetches: inside a section the
    holder fetches alone among them (the lock keeps its sections one at a time)."""
    P = bus_cycles.shape[0]
    return [_arrival_waits(app, bus_cycles - cs["lock_share"][k] * cs["load"][2 * P:], execution, transfer)
            for k in range(cs["lock_share"].size)]


def _nested_waits(alone: list, P: int) -> np.ndarray:
    """The wait of a message a node sends inside each lock's sections to another node's
    bus (nodes x lock stations, cycles): the other nodes' arrival waits without that
    lock's sections' fetches (``alone``, :func:`_alone_arrival_waits`), averaged, as the
    lock messages outside sections meet them."""
    out = np.zeros((P, len(alone)))
    for k, (at_server, _) in enumerate(alone):
        out[:, k] = (at_server.sum() - at_server) / max(P - 1, 1)
    return out


def _arrival_waits(app: dict, bus_cycles, execution: float, transfer: float):
    """The wait of a message arriving at each node's I/O bus (cycles, an array over
    nodes): the data streams into memory only once the bus is free, so an arrival waits
    for the transfers booked before it, the Pollaczek-Khinchine mean wait of a FCFS
    queue, U / (1 - U) x E[x^2] / (2 E[x]) (Kleinrock, Queueing Systems vol. 1, 1975,
    eq. 5.105), with U the bus's utilisation over the run (``bus_cycles`` /
    ``execution``, at most BACKGROUND_LIMIT) and x the transfers it carries (replies
    sent and received, one-way messages).  Returned twice: for a request arriving at a
    server, and for a node's own reply, which never waits for its own replies (one at a
    time) and so meets the bus without them."""
    payload = _mean_reply_payload(app)
    zero = np.zeros_like(app["busy"])
    own = (HEADER + _reply_payload(app)) * transfer
    oneway = np.divide(app["oneway_bytes"], app["oneway"], out=zero.copy(), where=app["oneway"] > 0) * transfer
    trips = _travelling(app)
    flows = [(app["served"], (HEADER + payload) * transfer), (trips, own), (app["oneway"], oneway)]

    def wait(flows, busy):
        first = sum(n * x for n, x in flows)
        residual = np.divide(sum(n * x * x for n, x in flows), 2 * first, out=zero.copy(), where=first > 0)
        u = np.clip(busy / execution, 0.0, BACKGROUND_LIMIT)
        return u / (1.0 - u) * residual

    return wait(flows, bus_cycles), wait([flows[0], flows[2]], bus_cycles - trips * own)


def _breakdown(R, D: dict, Z: dict, K, P: int) -> dict:
    """Each node's residences split by purpose in proportion to demand; at lock
    stations, waiting for the lock is lock time and service the critical section."""
    total = sum(D.values())
    parts = {p: _residence_share(R, D[p], total) + Z[p] for p in PURPOSES}
    if K:
        locks = slice(3 * P, None)
        wait = np.maximum(R[locks].sum(axis=0) - total[locks].sum(axis=0), 0.0)
        for p in ("busy", "data_wait", "protocol", "lock"):     # their service; the queueing is lock
            parts[p] -= _residence_share(R[locks], D[p][locks], total[locks]) - D[p][locks].sum(axis=0)
        parts["lock"] += wait
    return parts
