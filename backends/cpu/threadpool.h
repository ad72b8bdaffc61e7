/* A small persistent thread pool with one operation: a parallel for over task
 * indices. One pool per CPU context; the calling thread works too, as thread 0.
 *
 * Tasks are handed out by an atomic counter, so which thread runs a task varies
 * from run to run: a task must write only its own outputs (and scratch indexed by
 * the thread id), which keeps results bit-identical across runs. */
#ifndef PA_CPU_THREADPOOL_H
#define PA_CPU_THREADPOOL_H

#include <stdint.h>

typedef struct pa_threadpool pa_threadpool;

/* fn(arg, task, thread): task in [0, count), thread in [0, threads). */
typedef void (*pa_task_fn)(void *arg, int64_t task, int thread);

/* Start threads - 1 workers (threads >= 1). NULL when a thread or the memory
 * could not be had; nothing is left running then. */
pa_threadpool *pa_threadpool_create(int threads);

/* Join the workers and free the pool. NULL is a no-op. */
void pa_threadpool_destroy(pa_threadpool *pool);

int pa_threadpool_threads(const pa_threadpool *pool);

/* Run fn for every task index and return when all have finished. Not reentrant:
 * one parallel_for at a time per pool (a context is not thread-safe anyway). */
void pa_threadpool_parallel_for(pa_threadpool *pool, int64_t count, pa_task_fn fn, void *arg);

#endif
