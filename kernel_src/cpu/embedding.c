/* The backward of an embedding (or of any index_select along the first dim): rows of the gradient added into a
 * zeroed table at their ids, one after another in the order of the ids (as np.add.at does, so the sums are the
 * same bit for bit). ids are already checked and made non-negative by the caller. */

#define TL_INDEX_ADD_ROWS(NAME, T)                                                                                  \
void NAME(long n_ids, const long long *restrict ids, long width, const T *restrict g, T *restrict out) {            \
    for (long k = 0; k < n_ids; k++) {                                                                              \
        T *restrict row = out + ids[k] * width;                                                                     \
        const T *restrict src = g + k * width;                                                                      \
        for (long j = 0; j < width; j++) row[j] += src[j];                                                          \
    }                                                                                                               \
}

TL_INDEX_ADD_ROWS(index_add_rows_f32, float)
TL_INDEX_ADD_ROWS(index_add_rows_f64, double)
