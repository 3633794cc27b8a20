/* OpenMP 5.1 memory allocators: omp_init_allocator's trait validation, the alignment of every
   block (64, 256, 4096), pool_size budgets and what each fallback does when a pool is exhausted,
   omp_calloc and omp_realloc (null pointer, size 0, content, alignment, pools), omp_free with
   omp_null_allocator, the default allocator per thread, and the allocate clause on private and
   firstprivate variables of a parallel region and a task. With an argument it runs one case that
   must end the program: `abort_fb` (an abort_fb allocator out of room) and `clause_null_fb` (an
   allocate clause whose null_fb allocator is out of room; the test registration checks their
   messages), checks OMP_ALLOCATOR (`env_default`), or misuses the API (`misuse CASE`). */
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* Too many elements for any n * size to fit (volatile: the compiler must not see the product). */
static volatile size_t huge_count = SIZE_MAX / 2;

static int aligned(const void* p, uintptr_t a) {
  return p && (uintptr_t)p % a == 0;
}

static omp_allocator_handle_t make(omp_memspace_handle_t space, int n,
                                   const omp_alloctrait_t* traits) {
  return omp_init_allocator(space, n, traits);
}

static omp_allocator_handle_t with_trait(omp_alloctrait_key_t key, omp_uintptr_t value) {
  omp_alloctrait_t t[1] = {{key, value}};
  return make(omp_default_mem_space, 1, t);
}

static void invalid_traits(void) {
  CHECK(with_trait(omp_atk_alignment, 3) == omp_null_allocator);
  CHECK(with_trait(omp_atk_alignment, 0) == omp_null_allocator);
  CHECK(with_trait(omp_atk_alignment, 96) == omp_null_allocator);
  CHECK(with_trait(omp_atk_sync_hint, omp_atv_all) == omp_null_allocator);
  CHECK(with_trait(omp_atk_access, omp_atv_contended) == omp_null_allocator);
  CHECK(with_trait(omp_atk_fallback, omp_atv_true) == omp_null_allocator);
  CHECK(with_trait(omp_atk_partition, omp_atv_thread) == omp_null_allocator);
  CHECK(with_trait(omp_atk_pinned, 7) == omp_null_allocator);
  /* Pinned memory and high-bandwidth memory are not provided (libgomp 12 neither). */
  CHECK(with_trait(omp_atk_pinned, omp_atv_true) == omp_null_allocator);
  CHECK(make(omp_high_bw_mem_space, 0, NULL) == omp_null_allocator);
  CHECK(with_trait((omp_alloctrait_key_t)99, 1) == omp_null_allocator);
  CHECK(make((omp_memspace_handle_t)5, 0, NULL) == omp_null_allocator);
  /* One bad trait among good ones spoils the lot. */
  omp_alloctrait_t mixed[3] = {
      {omp_atk_alignment, 64}, {omp_atk_pool_size, 4096}, {omp_atk_fallback, omp_atv_thread}};
  CHECK(make(omp_default_mem_space, 3, mixed) == omp_null_allocator);
}

static void valid_traits(void) {
  /* Every key with its default, and every accepted value of the enumerated ones. */
  const omp_alloctrait_key_t keys[] = {omp_atk_sync_hint, omp_atk_alignment, omp_atk_access,
                                       omp_atk_pool_size, omp_atk_fallback,  omp_atk_fb_data,
                                       omp_atk_pinned,    omp_atk_partition};
  for (unsigned i = 0; i < sizeof keys / sizeof keys[0]; ++i) {
    omp_allocator_handle_t a = with_trait(keys[i], omp_atv_default);
    CHECK(a != omp_null_allocator);
    void* p = omp_alloc(100, a);
    CHECK(aligned(p, sizeof(void*)));
    omp_free(p, a);
    omp_destroy_allocator(a);
  }
  const omp_uintptr_t sync[] = {omp_atv_contended, omp_atv_uncontended, omp_atv_serialized,
                                omp_atv_private};
  const omp_uintptr_t access[] = {omp_atv_all, omp_atv_cgroup, omp_atv_pteam, omp_atv_thread};
  const omp_uintptr_t fallback[] = {omp_atv_default_mem_fb, omp_atv_null_fb, omp_atv_abort_fb,
                                    omp_atv_allocator_fb};
  const omp_uintptr_t partition[] = {omp_atv_environment, omp_atv_nearest, omp_atv_blocked,
                                     omp_atv_interleaved};
  for (int i = 0; i < 4; ++i) {
    omp_alloctrait_t t[5] = {{omp_atk_sync_hint, sync[i]},
                             {omp_atk_access, access[i]},
                             {omp_atk_fallback, fallback[i]},
                             {omp_atk_partition, partition[i]},
                             {omp_atk_pinned, omp_atv_false}};
    omp_memspace_handle_t spaces[] = {omp_default_mem_space, omp_large_cap_mem_space,
                                      omp_const_mem_space, omp_low_lat_mem_space};
    omp_allocator_handle_t a = make(spaces[i], 5, t);
    CHECK(a != omp_null_allocator);
    int* p = omp_alloc(10 * sizeof(int), a);
    CHECK(p != NULL);
    for (int k = 0; k < 10; ++k) p[k] = k;
    CHECK(p[9] == 9);
    omp_free(p, a);
    omp_destroy_allocator(a);
  }
  omp_destroy_allocator(omp_null_allocator); /* does nothing */
}

static void predefined(void) {
  for (omp_allocator_handle_t a = omp_default_mem_alloc; a <= omp_thread_mem_alloc; ++a) {
    char* p = omp_alloc(1000, a);
    CHECK(aligned(p, sizeof(void*)));
    memset(p, 0x5a, 1000);
    char* q = omp_aligned_alloc(4096, 5000, a);
    CHECK(aligned(q, 4096));
    memset(q, 0xa5, 5000);
    CHECK(p[999] == 0x5a);
    omp_free(p, a);
    omp_free(q, omp_null_allocator);
  }
  CHECK(omp_alloc(0, omp_default_mem_alloc) == NULL);
  CHECK(omp_aligned_alloc(64, 0, omp_default_mem_alloc) == NULL);
  omp_free(NULL, omp_default_mem_alloc);
}

/* Blocks of every alignment from allocators with the trait, from omp_aligned_alloc, and the
   larger of the two when both ask. */
static void alignment(void) {
  const omp_uintptr_t aligns[] = {64, 256, 4096};
  for (int i = 0; i < 3; ++i) {
    omp_allocator_handle_t a = with_trait(omp_atk_alignment, aligns[i]);
    CHECK(a != omp_null_allocator);
    void* blocks[40];
    for (int k = 0; k < 40; ++k) {
      size_t size = 1 + (size_t)k * 37;
      switch (k % 4) {
        case 0:
          blocks[k] = omp_alloc(size, a);
          break;
        case 1:
          blocks[k] = omp_calloc(k, 3, a);
          break;
        case 2:
          blocks[k] = omp_aligned_alloc(16, size, a);
          break;
        default:
          blocks[k] = omp_aligned_calloc(8, 2, size, a);
          break;
      }
      CHECK(aligned(blocks[k], aligns[i]));
      if (blocks[k]) memset(blocks[k], k, k % 4 == 1 ? (size_t)k * 3 : size);
    }
    for (int k = 0; k < 40; ++k) omp_free(blocks[k], k % 2 ? a : omp_null_allocator);
    for (int j = 0; j < 3; ++j) {
      void* p = omp_aligned_alloc(aligns[j], 100, a);
      CHECK(aligned(p, aligns[i] > aligns[j] ? aligns[i] : aligns[j]));
      omp_free(p, a);
      p = omp_aligned_calloc(aligns[j], 10, 10, omp_default_mem_alloc);
      CHECK(aligned(p, aligns[j]));
      omp_free(p, omp_default_mem_alloc);
    }
    omp_destroy_allocator(a);
  }
}

/* How many blocks of `size` bytes `a` hands out before it returns NULL (at most 100); frees
   them. */
static int capacity(omp_allocator_handle_t a, size_t size) {
  void* blocks[100];
  int n = 0;
  while (n < 100 && (blocks[n] = omp_alloc(size, a)) != NULL) ++n;
  for (int i = 0; i < n; ++i) omp_free(blocks[i], omp_null_allocator);
  return n;
}

static void pools(void) {
  /* null_fb: NULL once the pool is spent; room comes back with each free. */
  omp_alloctrait_t t[2] = {{omp_atk_pool_size, 4500}, {omp_atk_fallback, omp_atv_null_fb}};
  omp_allocator_handle_t a = make(omp_default_mem_space, 2, t);
  CHECK(a != omp_null_allocator);
  const int n = capacity(a, 1000);
  CHECK(n >= 1 && n <= 4);
  CHECK(capacity(a, 1000) == n); /* freeing gave all of it back */
  CHECK(omp_alloc(4501, a) == NULL);
  CHECK(omp_calloc(1000, 1000, a) == NULL);
  CHECK(omp_calloc(huge_count, 4, a) == NULL); /* n * size overflows */
  {
    void* p = omp_alloc(1000, a);
    void* q = omp_alloc(1000, a);
    CHECK(p && q);
    omp_free(p, a);
    p = omp_alloc(1000, a);
    CHECK(p != NULL);
    omp_free(p, a);
    omp_free(q, a);
  }
  CHECK(capacity(a, 1000) == n);

  /* realloc charges and refunds the pool: grown in place, shrunk, moved out of and into it. */
  {
    char* p = omp_alloc(100, a);
    CHECK(p != NULL);
    for (int i = 0; i < 100; ++i) p[i] = (char)i;
    p = omp_realloc(p, 3000, a, a);
    CHECK(p != NULL && p[99] == 99);
    CHECK(omp_alloc(3000, a) == NULL); /* 3000 + 3000 > 4500 */
    p = omp_realloc(p, 50, omp_null_allocator, omp_null_allocator);
    CHECK(p != NULL && p[49] == 49);
    void* q = omp_alloc(3000, a); /* the shrunk block left room */
    CHECK(q != NULL);
    omp_free(q, a);
    CHECK(omp_realloc(p, 5000, a, a) == NULL); /* null_fb: the old block stays */
    CHECK(p[0] == 0 && p[49] == 49);
    p = omp_realloc(p, 5000, omp_default_mem_alloc, a); /* out of the pool */
    CHECK(p != NULL && p[49] == 49);
    CHECK(capacity(a, 1000) == n);
    p = omp_realloc(p, 1000, a, omp_default_mem_alloc); /* back in */
    CHECK(p != NULL && p[49] == 49);
    CHECK(capacity(a, 1000) == n - 1);
    omp_free(p, omp_null_allocator);
    CHECK(capacity(a, 1000) == n);
  }

  /* The budget is shared by threads: n threads each holding one block at a time never fail. */
  {
    int fails = 0;
#pragma omp parallel num_threads(n) reduction(+ : fails)
    for (int i = 0; i < 2000; ++i) {
      void* p = omp_alloc(1000, a);
      if (!p) ++fails;
      omp_free(p, a);
    }
    CHECK(fails == 0);
    CHECK(capacity(a, 1000) == n);
  }

  /* default_mem_fb: past the pool, blocks come from the default allocator. */
  {
    omp_alloctrait_t d[2] = {{omp_atk_pool_size, 4500}, {omp_atk_alignment, 256}};
    omp_allocator_handle_t b = make(omp_default_mem_space, 2, d);
    CHECK(b != omp_null_allocator);
    void* blocks[10];
    for (int i = 0; i < 10; ++i) {
      blocks[i] = omp_alloc(1000, b);
      CHECK(blocks[i] != NULL);
      if (blocks[i]) memset(blocks[i], i, 1000);
    }
    CHECK(aligned(blocks[0], 256)); /* from the pool */
    for (int i = 0; i < 10; ++i) omp_free(blocks[i], b);
    omp_destroy_allocator(b);
  }

  /* allocator_fb: past the pool, blocks come from fb_data's allocator. */
  {
    omp_allocator_handle_t big = with_trait(omp_atk_alignment, 4096);
    omp_alloctrait_t f[3] = {{omp_atk_pool_size, 4500},
                             {omp_atk_fallback, omp_atv_allocator_fb},
                             {omp_atk_fb_data, big}};
    omp_allocator_handle_t c = make(omp_default_mem_space, 3, f);
    CHECK(c != omp_null_allocator);
    void* blocks[10];
    int big_aligned = 0;
    for (int i = 0; i < 10; ++i) {
      blocks[i] = omp_alloc(1000, c);
      CHECK(blocks[i] != NULL);
      big_aligned += aligned(blocks[i], 4096);
    }
    CHECK(big_aligned >= 10 - n);
    for (int i = 0; i < 10; ++i) omp_free(blocks[i], omp_null_allocator);
    CHECK(capacity(c, 1000) == 100); /* never NULL: the fallback has no pool */
    omp_destroy_allocator(c);
    omp_destroy_allocator(big);
  }
  omp_destroy_allocator(a);
}

static void realloc_calloc(void) {
  int* p = omp_realloc(NULL, 10 * sizeof(int), omp_default_mem_alloc, omp_null_allocator);
  CHECK(p != NULL);
  for (int i = 0; i < 10; ++i) p[i] = i + 1;
  p = omp_realloc(p, 100000 * sizeof(int), omp_null_allocator, omp_null_allocator);
  CHECK(p != NULL && p[0] == 1 && p[9] == 10);
  p = omp_realloc(p, 5 * sizeof(int), omp_default_mem_alloc, omp_default_mem_alloc);
  CHECK(p != NULL && p[4] == 5);
  CHECK(omp_realloc(p, 0, omp_default_mem_alloc, omp_default_mem_alloc) == NULL); /* freed */

  /* Moving between alignments keeps the contents and takes the new allocator's alignment; a
     null allocator keeps the block's own. */
  omp_allocator_handle_t a64 = with_trait(omp_atk_alignment, 64);
  omp_allocator_handle_t a4096 = with_trait(omp_atk_alignment, 4096);
  char* q = omp_alloc(300, a64);
  CHECK(aligned(q, 64));
  for (int i = 0; i < 300; ++i) q[i] = (char)(i * 7);
  q = omp_realloc(q, 9000, a4096, a64);
  CHECK(aligned(q, 4096) && q[299] == (char)(299 * 7));
  q = omp_realloc(q, 200, omp_null_allocator, omp_null_allocator);
  CHECK(aligned(q, 4096) && q[199] == (char)(199 * 7));
  q = omp_realloc(q, 100000, omp_default_mem_alloc, omp_null_allocator);
  CHECK(q != NULL && q[199] == (char)(199 * 7));
  omp_free(q, omp_null_allocator);

  unsigned char* z = omp_calloc(1000, 3, a64);
  CHECK(aligned(z, 64));
  int nonzero = 0;
  for (int i = 0; i < 3000; ++i) nonzero += z[i] != 0;
  CHECK(nonzero == 0);
  omp_free(z, a64);
  z = omp_aligned_calloc(4096, 7, 11, omp_default_mem_alloc);
  CHECK(aligned(z, 4096));
  for (int i = 0; i < 77; ++i) nonzero += z[i] != 0;
  CHECK(nonzero == 0);
  omp_free(z, omp_null_allocator);
  CHECK(omp_calloc(0, 8, omp_default_mem_alloc) == NULL);
  CHECK(omp_calloc(8, 0, omp_default_mem_alloc) == NULL);
  CHECK(omp_calloc(huge_count, 4, omp_default_mem_alloc) == NULL);
  omp_destroy_allocator(a64);
  omp_destroy_allocator(a4096);
}

/* def-allocator-var: set per thread; omp_null_allocator in omp_alloc means it. */
static void default_allocator(void) {
  CHECK(omp_get_default_allocator() == omp_default_mem_alloc);
  omp_allocator_handle_t own[4];
  const omp_uintptr_t aligns[4] = {64, 256, 1024, 4096};
  for (int i = 0; i < 4; ++i) own[i] = with_trait(omp_atk_alignment, aligns[i]);
  omp_set_default_allocator(own[1]);
  CHECK(omp_get_default_allocator() == own[1]);
  void* p = omp_alloc(10, omp_null_allocator);
  CHECK(aligned(p, 256));
  omp_free(p, omp_null_allocator);
  int wrong = 0;
#pragma omp parallel num_threads(4) reduction(+ : wrong)
  {
    const int me = omp_get_thread_num();
    omp_set_default_allocator(own[me]);
#pragma omp barrier
    for (int i = 0; i < 10; ++i) {
      if (omp_get_default_allocator() != own[me]) ++wrong;
      void* b = omp_alloc(100 + (size_t)i, omp_null_allocator);
      if (!aligned(b, aligns[me])) ++wrong;
      omp_free(b, omp_null_allocator);
#pragma omp barrier
    }
  }
  CHECK(wrong == 0);
  omp_set_default_allocator(omp_null_allocator);
  CHECK(omp_get_default_allocator() == omp_default_mem_alloc);
  for (int i = 0; i < 4; ++i) omp_destroy_allocator(own[i]);
}

/* The allocate clause (GOMP_alloc/GOMP_free). */
static void clause(void) {
  omp_allocator_handle_t a256 = with_trait(omp_atk_alignment, 256);
  omp_alloctrait_t t[2] = {{omp_atk_pool_size, 20000}, {omp_atk_alignment, 64}};
  omp_allocator_handle_t small = make(omp_default_mem_space, 2, t); /* default_mem_fb */
  int x = 7;
  double y = 2.5;
  double big[1000];
  for (int i = 0; i < 1000; ++i) big[i] = i;
  int wrong = 0;
#pragma omp parallel num_threads(4) private(x) firstprivate(y, big) reduction(+ : wrong) \
    allocate(a256 : x) allocate(allocator(omp_default_mem_alloc), align(4096) : y)       \
    allocate(small : big)
  {
    const int me = omp_get_thread_num();
    x = me;
    if (!aligned(&x, 256)) ++wrong;
    if (!aligned(&y, 4096) || y != 2.5) ++wrong;
    if (big[999] != 999.0) ++wrong;
    big[0] = me;
#pragma omp barrier
    if (x != me || big[0] != me) ++wrong;
    int z = me * 10;
#pragma omp task firstprivate(z) allocate(a256 : z) shared(wrong)
    {
      if (!aligned(&z, 256) || z != me * 10) {
#pragma omp atomic
        ++wrong;
      }
    }
#pragma omp taskwait
  }
  CHECK(wrong == 0);
  CHECK(x == 7 && y == 2.5 && big[0] == 0.0);
  omp_destroy_allocator(small);
  omp_destroy_allocator(a256);
}

static int abort_fb(void) {
  omp_alloctrait_t t[2] = {{omp_atk_pool_size, 4096}, {omp_atk_fallback, omp_atv_abort_fb}};
  omp_allocator_handle_t a = make(omp_default_mem_space, 2, t);
  void* p = omp_alloc(5000, a); /* ends the program */
  omp_free(p, a);
  return 0;
}

static int clause_null_fb(void) {
  omp_alloctrait_t t[2] = {{omp_atk_pool_size, 1024}, {omp_atk_fallback, omp_atv_null_fb}};
  omp_allocator_handle_t a = make(omp_default_mem_space, 2, t);
  double big[1000];
  big[0] = 1;
#pragma omp parallel num_threads(2) firstprivate(big) allocate(a : big)
  big[0] += 1; /* never reached: the copies do not fit */
  return 0;
}

/* Run with OMP_ALLOCATOR=" omp_Thread_mem_alloc ": the initial default allocator of every
   thread. */
static int env_default(void) {
  CHECK(omp_get_default_allocator() == omp_thread_mem_alloc);
  int wrong = 0;
#pragma omp parallel num_threads(3) reduction(+ : wrong)
  wrong += omp_get_default_allocator() != omp_thread_mem_alloc;
  CHECK(wrong == 0);
  return failures;
}

/* Misuse that libweft-omp stops with a message naming the routine (libgomp's behaviour is
   undefined there): a pointer no allocator returned, a number that is no allocator, destroying
   a predefined allocator. */
static int misuse(const char* what) {
  static char not_a_block[256];
  char* volatile inside = not_a_block + 64; /* volatile: GCC would reject the free outright */
  if (strcmp(what, "foreign_free") == 0) omp_free(inside, omp_default_mem_alloc);
  if (strcmp(what, "bad_handle") == 0) omp_free(omp_alloc(8, (omp_allocator_handle_t)100), 0);
  if (strcmp(what, "destroy_predefined") == 0) omp_destroy_allocator(omp_large_cap_mem_alloc);
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 2 && strcmp(argv[1], "misuse") == 0) return misuse(argv[2]);
  if (argc > 1 && strcmp(argv[1], "env_default") == 0) return env_default();
  if (argc > 1 && strcmp(argv[1], "abort_fb") == 0) return abort_fb();
  if (argc > 1 && strcmp(argv[1], "clause_null_fb") == 0) return clause_null_fb();
  invalid_traits();
  valid_traits();
  predefined();
  alignment();
  pools();
  realloc_calloc();
  default_allocator();
  clause();
  return failures;
}
