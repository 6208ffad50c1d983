/* jpeg.c -- JPEG decoding and encoding over libjpeg(-turbo)'s libjpeg API,
 * from and to memory. A large baseline image may be decoded in parts: the
 * caller's decoder from the top while helper threads (decoders of their
 * own, skipping to their first row) take parts from the bottom. libjpeg
 * reports errors through error_exit, which longjmps to the setjmp of the
 * function that owns the codec; that function frees everything and
 * returns an mt_status. Corrupt-data warnings are errors too, so that a
 * truncated file is refused, not gray-filled. */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jerror.h>
#include <jpeglib.h>

#include "image.h"

typedef struct {
  struct jpeg_error_mgr mgr;
  jmp_buf jump;
  const char *what; /* "JPEG decoder" or "JPEG encoder" */
} errctx;

static void on_error(j_common_ptr cinfo) {
  errctx *e = (errctx *)cinfo->err;
  char msg[JMSG_LENGTH_MAX];
  (*cinfo->err->format_message)(cinfo, msg);
  mt_fail(MT_EIO, "%s: %s", e->what, msg);
  longjmp(e->jump, 1);
}

static void on_message(j_common_ptr cinfo, int level) {
  if (level < 0) on_error(cinfo); /* warnings of corrupt data */
}

static void init_errors(errctx *e, const char *what) {
  jpeg_std_error(&e->mgr);
  e->mgr.error_exit = on_error;
  e->mgr.emit_message = on_message;
  e->what = what;
}

/* reads a 16- or 32-bit TIFF integer */
static unsigned get_u(const unsigned char *p, int bytes, int le) {
  unsigned v = 0;
  for (int i = 0; i < bytes; i++) v |= (unsigned)p[le ? i : bytes - 1 - i] << (8 * i);
  return v;
}

int mtd_tiff_orientation(const unsigned char *p, size_t n) {
  if (n < 8) return 1; /* the TIFF header: byte order, 42, offset of IFD0 */
  int le = p[0] == 'I';
  if ((p[0] != 'I' && p[0] != 'M') || p[1] != p[0] || get_u(p + 2, 2, le) != 42) return 1;
  size_t ifd = get_u(p + 4, 4, le);
  if (ifd > n - 2) return 1;
  unsigned count = get_u(p + ifd, 2, le);
  for (unsigned i = 0; i < count; i++) {
    size_t at = ifd + 2 + (size_t)i * 12;
    if (at + 12 > n) return 1;
    if (get_u(p + at, 2, le) == 0x0112) {
      unsigned v = get_u(p + at + 8, 2, le);
      return v >= 1 && v <= 8 ? (int)v : 1;
    }
  }
  return 1;
}

int mtd_exif_orientation(const unsigned char *p, size_t n) {
  return n >= 6 && !memcmp(p, "Exif\0\0", 6) ? mtd_tiff_orientation(p + 6, n - 6) : 1;
}

int mtd_jpeg_orientation(const unsigned char *p, size_t n) {
  size_t at = 2; /* after SOI; each segment: FF, marker, 2-byte length (itself included), payload */
  while (at + 4 <= n && p[at] == 0xFF) {
    unsigned m = p[at + 1], len = (unsigned)p[at + 2] << 8 | p[at + 3];
    if (m == 0xFF || m == 0x01 || (m >= 0xD0 && m <= 0xD7)) { /* a fill byte; TEM and RSTn have no length */
      at += m == 0xFF ? 1 : 2;
      continue;
    }
    if (m == 0xDA || m == 0xD9 || (len >= 2 && len > n - at - 2)) break;
    if (len < 2) { /* a bogus length: libjpeg reads the two bytes and goes on */
      at += 4;
      continue;
    }
    if (m == 0xE1 && len >= 8 && !memcmp(p + at + 4, "Exif\0\0", 6)) return mtd_exif_orientation(p + at + 4, len - 2);
    at += 2 + len;
  }
  return 1;
}

/* the encoder's output: a growing malloc'ed buffer that we own (libjpeg's
 * jpeg_mem_dest may free its buffer behind a longjmp) */
typedef struct {
  struct jpeg_destination_mgr mgr;
  unsigned char *p;
  size_t cap;
} dest;

static void dest_init(j_compress_ptr j) {
  dest *d = (dest *)j->dest;
  d->mgr.next_output_byte = d->p, d->mgr.free_in_buffer = d->cap;
}

static boolean dest_grow(j_compress_ptr j) {
  dest *d = (dest *)j->dest;
  unsigned char *q = realloc(d->p, d->cap * 2);
  if (!q) ERREXIT1(j, JERR_OUT_OF_MEMORY, 0);
  d->mgr.next_output_byte = q + d->cap, d->mgr.free_in_buffer = d->cap;
  d->p = q, d->cap *= 2;
  return TRUE;
}

static void dest_term(j_compress_ptr j) { (void)j; }

static int find_orientation(j_decompress_ptr d) {
  for (jpeg_saved_marker_ptr m = d->marker_list; m; m = m->next) /* the first Exif APP1 */
    if (m->marker == JPEG_APP0 + 1 && m->data_length >= 6 && !memcmp(m->data, "Exif\0\0", 6))
      return mtd_exif_orientation(m->data, m->data_length);
  return 1;
}

/* The header read and checked, the output color space chosen for mode. */
static mt_status setup(j_decompress_ptr d, int mode, size_t max_bytes) {
  jpeg_read_header(d, TRUE);
  if (d->jpeg_color_space == JCS_CMYK || d->jpeg_color_space == JCS_YCCK)
    return mt_fail(MT_EARG, "JPEG decoder: CMYK JPEGs are not supported");
  if (d->num_components != 1 && d->num_components != 3)
    return mt_fail(MT_EARG, "JPEG decoder: %d color components are not supported", d->num_components);
  /* refused before libjpeg allocates for it (progressive files buffer
   * every coefficient: 2 bytes a sample; the cap makes more an error) */
  if ((uint64_t)d->image_width * d->image_height * 4 > max_bytes)
    return mt_fail(MT_EARG, "JPEG decoder: an image of %u x %u pixels is too large", d->image_height, d->image_width);
  d->mem->max_memory_to_use = (long)(max_bytes < LONG_MAX / 4 ? max_bytes * 4 : LONG_MAX);
  int gray_in = d->num_components == 1;
  if (mode == MTD_GRAY || mode == MTD_GRAY_ALPHA || (mode == MTD_UNCHANGED && gray_in))
    d->out_color_space = JCS_GRAYSCALE;
  else
    d->out_color_space = mode == MTD_RGB_ALPHA ? JCS_EXT_RGBA : JCS_RGB;
  return MT_OK;
}

/* setup, the decoder started, img's size set and its pixels allocated. */
static mt_status start(j_decompress_ptr d, int mode, size_t max_bytes, mtd_image *img) {
  jpeg_save_markers(d, JPEG_APP0 + 1, 0xffff);
  mt_status st = setup(d, mode, max_bytes);
  img->orientation = find_orientation(d); /* markers before the first scan only */
  if (st) return st;
  jpeg_start_decompress(d);
  int c = d->output_components + (mode == MTD_GRAY_ALPHA);
  if (d->output_width == 0 || d->output_height == 0) return mt_fail(MT_EIO, "JPEG decoder: the image has no pixels");
  img->h = d->output_height, img->w = d->output_width, img->c = c, img->depth = 8;
  if (mtd_image_pixels(img, (size_t)img->h * img->w * c)) return MT_OK;
  return img->alloc ? MT_ENOMEM : mt_fail(MT_ENOMEM, "JPEG decoder: out of memory");
}

/* Reads the started decoder's rows [its output_scanline, to) into pix (rows
 * of `stride` bytes); finishes the file when to is the last row. */
static void read_rows(j_decompress_ptr d, uint8_t *pix, size_t stride, JDIMENSION to) {
  while (d->output_scanline < to) {
    JSAMPROW row = pix + (size_t)d->output_scanline * stride;
    jpeg_read_scanlines(d, &row, 1);
  }
  if (to == d->output_height) jpeg_finish_decompress(d);
}

/* One part of a split decode (a helper's): a decoder of its own reads the header again,
 * skips rows [0, from) (entropy decoding alone) and writes rows [from, to)
 * of img's pixels. Returns its status, the message copied into msg. */
static mt_status decode_part(const unsigned char *data, size_t n, int mode, size_t max_bytes, const mtd_image *img,
                             JDIMENSION from, JDIMENSION to, char *msg, size_t nmsg) {
  struct jpeg_decompress_struct d;
  errctx e;
  d.err = &e.mgr;
  init_errors(&e, "JPEG decoder");
  jpeg_create_decompress(&d);
  volatile mt_status st = MT_OK;
  if (setjmp(e.jump)) {
    st = MT_EIO; /* on_error set the message */
  } else {
    jpeg_mem_src(&d, data, (unsigned long)n);
    st = setup(&d, mode, max_bytes);
    if (!st) {
      jpeg_start_decompress(&d);
      if (from) jpeg_skip_scanlines(&d, from);
      read_rows(&d, img->pix, (size_t)img->w * d.output_components, to);
    }
  }
  jpeg_destroy_decompress(&d);
  if (st) snprintf(msg, nmsg, "%s", mt_errmsg());
  return st;
}

#define MAX_PARTS 16
#ifndef MTD_JPEG_PART_PIXELS
#define MTD_JPEG_PART_PIXELS 65536 /* fewer pixels a part: fewer parts (the fuzz build sets it low) */
#endif

/* How many parts the started decoder's image is decoded in (at most
 * `threads`), and where they
 * start (at[parts] = the height). A part starting at row s costs about
 * SKIP * s + its rows (skipping = entropy decoding: 0.26 to 0.6 of the
 * decode time on photos), so later parts get fewer rows; starts fall on
 * iMCU rows. Progressive files (all scans decoded before any row) and small
 * images take one part. */
static int plan_parts(j_decompress_ptr d, int threads, JDIMENSION *at) {
  const double SKIP = 0.5;
  JDIMENSION group = (JDIMENSION)d->max_v_samp_factor * DCTSIZE, H = d->output_height;
  int64_t parts = threads < MAX_PARTS ? threads : MAX_PARTS;
  int64_t by_size = (int64_t)d->output_width * H / MTD_JPEG_PART_PIXELS, by_rows = (H - 1) / group;
  if (parts > by_size) parts = by_size;
  if (parts > by_rows) parts = by_rows;
  if (parts < 2 || jpeg_has_multiple_scans(d) || d->scale_num != d->scale_denom) parts = 1;
  double tau = H * SKIP / (1 - pow(1 - SKIP, (double)parts)), s = 0;
  at[0] = 0, at[parts] = H;
  for (int k = 1; k < parts; k++) {
    s += tau - SKIP * s;
    JDIMENSION r = (JDIMENSION)s / group * group;
    at[k] = r > at[k - 1] ? r : at[k - 1];
  }
  return (int)parts;
}

/* ---- helpers: threads that take the parts of split decodes from the back
 * while the caller decodes from the front with its own decoder (no skip).
 * The caller never waits for a part nobody has claimed: it claims it. ---- */
typedef struct job {
  struct job *next;
  const unsigned char *data;
  size_t n, max_bytes;
  int mode, parts;
  const mtd_image *img;
  JDIMENSION at[MAX_PARTS + 1];
  int front, back, running; /* parts < front: the caller's; > back: helpers'; under pool_mu */
  mt_status st[MAX_PARTS];
  char msg[MAX_PARTS][200];
} job;

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_work = PTHREAD_COND_INITIALIZER, pool_done = PTHREAD_COND_INITIALIZER;
static job *jobs; /* posted split decodes, under pool_mu */
static int helpers;

/* Across fork (DataLoader workers) the pool lock is held; the child starts
 * with no helpers and no jobs (the helper threads stay in the parent). */
static void fork_lock(void) { pthread_mutex_lock(&pool_mu); }
static void fork_parent(void) { pthread_mutex_unlock(&pool_mu); }
static void fork_child(void) {
  pthread_mutex_unlock(&pool_mu);
  pool_work = (pthread_cond_t)PTHREAD_COND_INITIALIZER; /* their waiters are not in the child */
  pool_done = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
  helpers = 0;
  jobs = NULL;
}
__attribute__((constructor)) static void fork_guard(void) { pthread_atfork(fork_lock, fork_parent, fork_child); }

static void *helper_main(void *arg) {
  (void)arg;
  pthread_mutex_lock(&pool_mu);
  for (;;) {
    job *j = jobs;
    while (j && j->back < j->front) j = j->next;
    if (!j) {
      pthread_cond_wait(&pool_work, &pool_mu);
      continue;
    }
    int k = j->back--;
    j->running++;
    pthread_mutex_unlock(&pool_mu);
    mt_status st = decode_part(j->data, j->n, j->mode, j->max_bytes, j->img, j->at[k], j->at[k + 1], j->msg[k],
                               sizeof j->msg[k]);
    pthread_mutex_lock(&pool_mu);
    j->st[k] = st, j->running--;
    pthread_cond_broadcast(&pool_done);
  }
  return NULL;
}

/* Queues j for the helpers, starting helpers up to `want`. */
static void post(job *j, int want) {
  pthread_mutex_lock(&pool_mu);
  while (helpers < want) {
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int bad = pthread_create(&t, &attr, helper_main, NULL);
    pthread_attr_destroy(&attr);
    if (bad) break; /* fewer helpers: the caller takes more parts */
    helpers++;
  }
  j->next = jobs, jobs = j;
  pthread_cond_broadcast(&pool_work);
  pthread_mutex_unlock(&pool_mu);
}

/* The caller's next part (from the front), or -1 when none is left. */
static int claim_front(job *j) {
  pthread_mutex_lock(&pool_mu);
  int k = j->front <= j->back ? j->front++ : -1;
  pthread_mutex_unlock(&pool_mu);
  return k;
}

/* Takes j off the queue (parts nobody claimed are dropped) once the
 * helpers' parts are done; returns the first failing part's status with
 * its message set, or MT_OK. */
static mt_status retire(job *j) {
  pthread_mutex_lock(&pool_mu);
  j->back = j->front - 1 > j->back ? j->back : j->front - 1;
  while (j->running) pthread_cond_wait(&pool_done, &pool_mu);
  job **p = &jobs;
  while (*p != j) p = &(*p)->next;
  *p = j->next;
  pthread_mutex_unlock(&pool_mu);
  for (int k = 0; k < j->parts; k++)
    if (j->st[k]) return mt_fail(j->st[k], "%s", j->msg[k]);
  return MT_OK;
}

/* A split decode set up for parts [at[k], at[k+1]) of img. */
static void job_init(job *j, const unsigned char *data, size_t n, int mode, size_t max_bytes, const mtd_image *img,
                     int parts) {
  j->data = data, j->n = n, j->mode = mode, j->max_bytes = max_bytes, j->img = img, j->parts = parts;
  j->front = 0, j->back = parts - 1, j->running = 0;
  for (int k = 0; k < parts; k++) j->st[k] = MT_OK;
}

/* GRAY_ALPHA: the gray rows were read packed; spread them, alpha 255. */
static void add_alpha(mtd_image *img) {
  uint8_t *p = img->pix;
  for (int64_t i = img->h * img->w - 1; i >= 0; i--) p[2 * i] = p[i], p[2 * i + 1] = 255;
}

mt_status mtd_jpeg_decode(const unsigned char *data, size_t n, int mode, size_t max_bytes, mtd_image *img) {
  mtd_image_reset(img);
  if (n < 3 || data[0] != 0xFF || data[1] != 0xD8 || data[2] != 0xFF)
    return mt_fail(MT_EARG, "JPEG decoder: not a JPEG file (wrong signature)");
  struct jpeg_decompress_struct d;
  errctx e;
  d.err = &e.mgr;
  init_errors(&e, "JPEG decoder");
  jpeg_create_decompress(&d);
  volatile mt_status st = MT_OK;
  volatile int posted = 0;
  job j;
  if (setjmp(e.jump)) {
    st = MT_EIO; /* on_error set the message (also after start() had succeeded) */
  } else {
    jpeg_mem_src(&d, data, (unsigned long)n);
    st = start(&d, mode, max_bytes, img);
    int parts = st ? 1 : plan_parts(&d, img->threads, j.at);
    size_t stride = (size_t)img->w * d.output_components;
    if (!st && parts == 1) read_rows(&d, img->pix, stride, d.output_height);
    if (!st && parts > 1) {
      job_init(&j, data, n, mode, max_bytes, img, parts);
      post(&j, parts - 1);
      posted = 1;
      for (int k; (k = claim_front(&j)) >= 0;) read_rows(&d, img->pix, stride, j.at[k + 1]);
    }
  }
  if (posted) { /* helpers may be writing rows: wait for them on every path */
    mt_status hs = retire(&j);
    if (!st) st = hs;
  }
  jpeg_destroy_decompress(&d);
  if (!st && mode == MTD_GRAY_ALPHA) add_alpha(img);
  if (st) mtd_image_drop(img);
  return st;
}

mt_status mtd_jpeg_encode(const uint8_t *pix, int64_t h, int64_t w, int c, int quality, unsigned char **out,
                          size_t *n) {
  *out = NULL, *n = 0;
  if (c != 1 && c != 3) return mt_fail(MT_EARG, "JPEG encoder: %d channels (expected 1 or 3)", c);
  if (h < 1 || w < 1 || h > JPEG_MAX_DIMENSION || w > JPEG_MAX_DIMENSION)
    return mt_fail(MT_EARG, "JPEG encoder: an image of %lld x %lld pixels cannot be encoded", (long long)h,
                   (long long)w);
  struct jpeg_compress_struct j;
  errctx e;
  j.err = &e.mgr;
  init_errors(&e, "JPEG encoder");
  jpeg_create_compress(&j);
  dest out_ = {{0}, malloc(65536), 65536};
  volatile mt_status st = out_.p ? MT_EIO : mt_fail(MT_ENOMEM, "JPEG encoder: out of memory");
  if (out_.p && !setjmp(e.jump)) {
    out_.mgr.init_destination = dest_init, out_.mgr.empty_output_buffer = dest_grow;
    out_.mgr.term_destination = dest_term;
    j.dest = &out_.mgr;
    j.image_width = (JDIMENSION)w, j.image_height = (JDIMENSION)h, j.input_components = c;
    j.in_color_space = c == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&j);
    jpeg_set_quality(&j, quality, TRUE);
    jpeg_start_compress(&j, TRUE);
    while (j.next_scanline < j.image_height) {
      JSAMPROW row = (JSAMPROW)(pix + (size_t)j.next_scanline * w * c);
      jpeg_write_scanlines(&j, &row, 1);
    }
    jpeg_finish_compress(&j);
    st = MT_OK;
  }
  jpeg_destroy_compress(&j);
  if (st) {
    free(out_.p);
    return st;
  }
  *out = out_.p, *n = out_.cap - out_.mgr.free_in_buffer;
  return MT_OK;
}
