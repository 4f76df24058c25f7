/* A fork-based PARMACS runtime for tracing SPLASH-2 / Splash-3 programs as processes.
 *
 * SPLASH-2's programs are written against the PARMACS macros (CREATE, G_MALLOC, BARRIER,
 * LOCK, ...), first implemented with processes that share one arena.  This runtime does
 * the same, so that valgrind's lackey (one log per process) sees one trace per process:
 *
 *   - MAIN_INITENV maps the arena (MAP_SHARED | MAP_NORESERVE, PARMACS_ARENA_MB MiB,
 *     default 4096) and remaps the program's own global data (.data and .bss) shared, as
 *     the threads of Splash-3 share it (some programs write globals after CREATE that the
 *     other workers read);
 *   - G_MALLOC is a bump allocator in the arena (64-byte aligned) that logs each block
 *     with the source file and line of the call, so a converter can name the structures;
 *   - CREATE(f, n) forks n - 1 processes that run f and exit; the caller runs f itself;
 *     a process that exits with an error kills the program's process group (the others
 *     would wait at a barrier for ever);
 *   - locks, barriers, pauses and condition variables are process-shared pthread objects;
 *   - every synchronisation and the region of interest touch a private marker page
 *     (a one-byte increment at MARK + kind), followed by a one-byte load of the lock or
 *     barrier object itself (its identity, stored at MARK + 64: valgrind removes loads
 *     whose value is unused); the converter turns these into trace markers and leaves
 *     out the library's own references up to the END marker: the simulated machines
 *     model synchronisation themselves.
 *
 * The layout (arena, globals, marker page, each process's pid, each allocation) is
 * appended, one line per fact, to the file named by PARMACS_LAYOUT (default
 * parmacs.layout).  Part of the mva-smp project: calibration/sim/splash.py reads it.
 */
#ifndef PARMACS_FORK_H
#define PARMACS_FORK_H
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE_SIZE 4096
#define PF_MAX_PROCS 1024
/* marker kinds: byte offsets in the marker page */
#define PF_END 0
#define PF_BARRIER 1
#define PF_ACQUIRE 2
#define PF_RELEASE 3
#define PF_SYNC 4          /* library work without an event (fork, wait, semaphores) */
#define PF_ROI_BEGIN 5
#define PF_ROI_END 6

struct pf_arena_header {   /* at the start of the arena, shared by every process */
  atomic_size_t next;      /* bump pointer: bytes from the arena's start */
  size_t size;
  int nprocs;
  pid_t pids[PF_MAX_PROCS];
};

void pf_init(void);
void *pf_malloc(size_t bytes, const char *file, int line);
void pf_create(void (*fn)(void), long count);
void pf_wait_for_end(long count);
void pf_mark(int kind, const volatile void *object);
void pf_mutex_init(pthread_mutex_t *m);
void pf_barrier_init(pthread_barrier_t *b, unsigned count);
void pf_cond_init(pthread_cond_t *c);
extern volatile char *pf_marker_page;

#define PF_SYNC_BEGIN(kind, object) pf_mark((kind), (object))
#define PF_SYNC_DONE() pf_mark(PF_END, 0)
#endif

/* the definitions, once, in the file whose MAIN_ENV defines PARMACS_FORK_MAIN (it may
 * have included this header through EXTERN_ENV before) */
#if defined(PARMACS_FORK_MAIN) && !defined(PARMACS_FORK_DEFINED)
#define PARMACS_FORK_DEFINED
volatile char *pf_marker_page;
static struct pf_arena_header *pf_arena;
static __thread int pf_process_id;     /* thread-local: never in the shared globals */

extern char __data_start, _end;        /* the program's .data and .bss (GNU ld) */

static void pf_fail(const char *what) {
  fprintf(stderr, "parmacs: %s: %s\n", what, strerror(errno));
  _exit(3);
}

static void pf_layout(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#include <stdarg.h>
static void pf_layout(const char *fmt, ...) {
  const char *path = getenv("PARMACS_LAYOUT");
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  int fd = open(path ? path : "parmacs.layout", O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) pf_fail("layout file");
  if (write(fd, line, (size_t)n) != n) pf_fail("layout file");   /* one write: lines stay whole */
  close(fd);
}

static void pf_share_globals(void) {
  /* copy .data/.bss into a shared mapping and put it in their place */
  uintptr_t lo = (uintptr_t)&__data_start & ~(uintptr_t)(PAGE_SIZE - 1);
  uintptr_t hi = ((uintptr_t)&_end + PAGE_SIZE - 1) & ~(uintptr_t)(PAGE_SIZE - 1);
  size_t len = hi - lo;
  void *copy = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (copy == MAP_FAILED) pf_fail("mmap globals");
  memcpy(copy, (void *)lo, len);
  if (mremap(copy, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)lo) == MAP_FAILED) pf_fail("mremap globals");
  pf_layout("globals %#lx %#lx\n", (unsigned long)lo, (unsigned long)hi);
}

void pf_init(void) {
  if (pf_arena) return;
  const char *mb = getenv("PARMACS_ARENA_MB");
  size_t size = (size_t)(mb ? atol(mb) : 4096) << 20;
  void *arena = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (arena == MAP_FAILED) pf_fail("mmap arena (set PARMACS_ARENA_MB lower)");
  void *marks = mmap(NULL, PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (marks == MAP_FAILED) pf_fail("mmap marker page");
  pf_marker_page = marks;
  pf_arena = arena;
  pf_arena->size = size;
  atomic_store(&pf_arena->next, (sizeof *pf_arena + 63) & ~(size_t)63);
  pf_arena->nprocs = 1;
  pf_arena->pids[0] = getpid();
  pf_layout("arena %#lx %#lx\n", (unsigned long)arena, (unsigned long)arena + size);
  pf_layout("marker %#lx %#lx\n", (unsigned long)marks, (unsigned long)marks + PAGE_SIZE);
  pf_layout("process 0 %ld\n", (long)getpid());
  pf_share_globals();
}

void *pf_malloc(size_t bytes, const char *file, int line) {
  if (!pf_arena) pf_init();
  size_t need = (bytes + 63) & ~(size_t)63;
  size_t at = atomic_fetch_add(&pf_arena->next, need);
  if (at + need > pf_arena->size) {
    fprintf(stderr, "parmacs: G_MALLOC of %zu bytes at %s:%d exceeds the arena (PARMACS_ARENA_MB)\n",
            bytes, file, line);
    _exit(3);
  }
  char *p = (char *)pf_arena + at;
  pf_layout("alloc %#lx %zu %s %d\n", (unsigned long)p, bytes, file, line);
  return p;
}

void pf_mark(int kind, const volatile void *object) {
  /* valgrind drops loads whose value is unused, so each value is stored back */
  pf_marker_page[kind]++;                                          /* the marker */
  if (object) pf_marker_page[64] = *(const volatile char *)object;  /* the object's identity */
}

static void pf_on_exit(int status, void *unused) {
  (void)unused;
  if (status != 0) {            /* a worker gave up: the others would wait at a barrier forever */
    fflush(NULL);
    kill(0, SIGKILL);           /* the program's own process group (the recorder starts it alone) */
  }
}

void pf_create(void (*fn)(void), long count) {
  pf_mark(PF_SYNC, 0);
  fflush(NULL);                            /* buffered output is not written twice */
  for (long i = 1; i < count; i++) {
    int id = pf_arena->nprocs++;
    if (id >= PF_MAX_PROCS) { fprintf(stderr, "parmacs: more than %d processes\n", PF_MAX_PROCS); _exit(3); }
    pid_t pid = fork();
    if (pid < 0) pf_fail("fork");
    if (pid == 0) {
      on_exit(pf_on_exit, NULL);
      pf_process_id = id;
      pf_arena->pids[id] = getpid();
      pf_layout("process %d %ld\n", id, (long)getpid());
      pf_mark(PF_END, 0);
      fn();
      fflush(NULL);
      _exit(0);
    }
  }
  on_exit(pf_on_exit, NULL);
  pf_mark(PF_END, 0);
  fn();
}

void pf_wait_for_end(long count) {
  pf_mark(PF_SYNC, 0);
  for (long i = 1; i < count; i++) {
    int status;
    if (wait(&status) < 0) pf_fail("wait");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      fprintf(stderr, "parmacs: a worker process failed (status %d)\n", status);
      exit(3);
    }
  }
  pf_mark(PF_END, 0);
}

void pf_mutex_init(pthread_mutex_t *m) {
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
  pthread_mutex_init(m, &a);
  pthread_mutexattr_destroy(&a);
}

void pf_barrier_init(pthread_barrier_t *b, unsigned count) {
  pthread_barrierattr_t a;
  pthread_barrierattr_init(&a);
  pthread_barrierattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
  pthread_barrier_init(b, &a, count);
  pthread_barrierattr_destroy(&a);
}

void pf_cond_init(pthread_cond_t *c) {
  pthread_condattr_t a;
  pthread_condattr_init(&a);
  pthread_condattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
  pthread_cond_init(c, &a);
  pthread_condattr_destroy(&a);
}
#endif
