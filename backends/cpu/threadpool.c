#include "threadpool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

struct pa_threadpool {
  int threads;
  pthread_t *workers; /* threads - 1 of them */

  pthread_mutex_t lock;
  pthread_cond_t wake; /* workers wait here for a new generation */
  pthread_cond_t idle; /* the caller waits here for the workers to finish */
  uint64_t generation; /* bumped once per parallel_for (under lock) */
  int busy;            /* workers still inside the current generation */
  int stop;

  /* The current job; written under lock before the generation is bumped. */
  pa_task_fn fn;
  void *arg;
  int64_t count;
  atomic_int_fast64_t next; /* the next unclaimed task index */
};

typedef struct worker_arg {
  pa_threadpool *pool;
  int thread;
} worker_arg;

static void run_tasks(pa_threadpool *pool, int thread) {
  for (;;) {
    int64_t t = atomic_fetch_add_explicit(&pool->next, 1, memory_order_relaxed);
    if (t >= pool->count) return;
    pool->fn(pool->arg, t, thread);
  }
}

static void *worker_main(void *p) {
  worker_arg *wa = (worker_arg *)p;
  pa_threadpool *pool = wa->pool;
  int thread = wa->thread;
  free(wa);
  uint64_t seen = 0;
  pthread_mutex_lock(&pool->lock);
  for (;;) {
    while (!pool->stop && pool->generation == seen) pthread_cond_wait(&pool->wake, &pool->lock);
    if (pool->stop) break;
    seen = pool->generation;
    pthread_mutex_unlock(&pool->lock);
    run_tasks(pool, thread);
    pthread_mutex_lock(&pool->lock);
    if (--pool->busy == 0) pthread_cond_signal(&pool->idle);
  }
  pthread_mutex_unlock(&pool->lock);
  return NULL;
}

static void stop_workers(pa_threadpool *pool, int started) {
  pthread_mutex_lock(&pool->lock);
  pool->stop = 1;
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->lock);
  for (int i = 0; i < started; ++i) pthread_join(pool->workers[i], NULL);
}

pa_threadpool *pa_threadpool_create(int threads) {
  if (threads < 1) threads = 1;
  pa_threadpool *pool = (pa_threadpool *)calloc(1, sizeof *pool);
  if (!pool) return NULL;
  pool->threads = threads;
  atomic_init(&pool->next, 0);
  pool->workers = (pthread_t *)calloc((size_t)threads, sizeof(pthread_t));
  if (!pool->workers) {
    free(pool);
    return NULL;
  }
  pthread_mutex_init(&pool->lock, NULL);
  pthread_cond_init(&pool->wake, NULL);
  pthread_cond_init(&pool->idle, NULL);
  for (int i = 0; i < threads - 1; ++i) {
    worker_arg *wa = (worker_arg *)malloc(sizeof *wa);
    int ok = wa != NULL;
    if (ok) {
      wa->pool = pool;
      wa->thread = i + 1;
      ok = pthread_create(&pool->workers[i], NULL, worker_main, wa) == 0;
      if (!ok) free(wa);
    }
    if (!ok) {
      stop_workers(pool, i);
      pthread_cond_destroy(&pool->idle);
      pthread_cond_destroy(&pool->wake);
      pthread_mutex_destroy(&pool->lock);
      free(pool->workers);
      free(pool);
      return NULL;
    }
  }
  return pool;
}

void pa_threadpool_destroy(pa_threadpool *pool) {
  if (!pool) return;
  stop_workers(pool, pool->threads - 1);
  pthread_cond_destroy(&pool->idle);
  pthread_cond_destroy(&pool->wake);
  pthread_mutex_destroy(&pool->lock);
  free(pool->workers);
  free(pool);
}

int pa_threadpool_threads(const pa_threadpool *pool) { return pool->threads; }

void pa_threadpool_parallel_for(pa_threadpool *pool, int64_t count, pa_task_fn fn, void *arg) {
  if (count <= 0) return;
  /* Not worth waking anyone for a single task. */
  if (pool->threads == 1 || count == 1) {
    for (int64_t t = 0; t < count; ++t) fn(arg, t, 0);
    return;
  }
  pthread_mutex_lock(&pool->lock);
  pool->fn = fn;
  pool->arg = arg;
  pool->count = count;
  atomic_store_explicit(&pool->next, 0, memory_order_relaxed);
  pool->busy = pool->threads - 1;
  pool->generation++;
  pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->lock);

  run_tasks(pool, 0);

  pthread_mutex_lock(&pool->lock);
  while (pool->busy > 0) pthread_cond_wait(&pool->idle, &pool->lock);
  pthread_mutex_unlock(&pool->lock);
}
