// SPDX-License-Identifier: Apache-2.0
// ABT_sched_config_* and ABT_pool_config_*: typed values under integer indices.
#include <cstdarg>
#include <new>

#include "objects.hpp"

// Predefined variables. Negative indices are reserved for the layer itself.
extern "C" {
ABT_sched_config_var ABT_sched_config_var_end = {-1, ABT_SCHED_CONFIG_INT};
ABT_sched_config_var ABT_sched_basic_freq = {-2, ABT_SCHED_CONFIG_INT};
ABT_sched_config_var ABT_sched_config_access = {-3, ABT_SCHED_CONFIG_INT};
ABT_sched_config_var ABT_sched_config_automatic = {-4, ABT_SCHED_CONFIG_INT};
const ABT_pool_config_var ABT_pool_config_automatic = {-1, ABT_POOL_CONFIG_INT};
}

namespace {

bool valid_type(int t) {
  return t == ABT_SCHED_CONFIG_INT || t == ABT_SCHED_CONFIG_DOUBLE || t == ABT_SCHED_CONFIG_PTR;
}

/// Stores *val (of `type`) under `key`; val == NULL erases it (Argobots' "unset").
void set_value(std::map<int, abt::config_value>& m, int key, int type, const void* val) {
  if (!val) {
    m.erase(key);
    return;
  }
  abt::config_value c;
  c.type = type;
  if (type == ABT_SCHED_CONFIG_INT)
    c.v.i = *static_cast<const int*>(val);
  else if (type == ABT_SCHED_CONFIG_DOUBLE)
    c.v.d = *static_cast<const double*>(val);
  else
    c.v.p = *static_cast<void* const*>(val);
  m[key] = c;
}

void copy_out(const abt::config_value& c, void* val) {
  if (!val) return;
  if (c.type == ABT_SCHED_CONFIG_INT)
    *static_cast<int*>(val) = c.v.i;
  else if (c.type == ABT_SCHED_CONFIG_DOUBLE)
    *static_cast<double*>(val) = c.v.d;
  else
    *static_cast<void**>(val) = c.v.p;
}

}  // namespace

extern "C" {

int ABT_sched_config_create(ABT_sched_config* config, ...) {
  if (!config) return ABT_ERR_INV_ARG;
  auto* c = new (std::nothrow) ABT_sched_config_opaque;
  if (!c) return ABT_ERR_MEM;
  va_list ap;
  va_start(ap, config);
  int rc = ABT_SUCCESS;
  for (;;) {
    ABT_sched_config_var var = va_arg(ap, ABT_sched_config_var);
    if (var.idx == ABT_sched_config_var_end.idx) break;
    if (!valid_type(var.type)) {
      rc = ABT_ERR_INV_ARG;
      break;
    }
    abt::config_value v;
    v.type = var.type;
    if (var.type == ABT_SCHED_CONFIG_INT)
      v.v.i = va_arg(ap, int);
    else if (var.type == ABT_SCHED_CONFIG_DOUBLE)
      v.v.d = va_arg(ap, double);
    else
      v.v.p = va_arg(ap, void*);
    c->values[var.idx] = v;
  }
  va_end(ap);
  if (rc != ABT_SUCCESS) {
    delete c;
    return rc;
  }
  *config = c;
  return ABT_SUCCESS;
}

int ABT_sched_config_read(ABT_sched_config config, int num_vars, ...) {
  if (!config) return ABT_ERR_INV_SCHED_CONFIG;
  if (num_vars < 0) return ABT_ERR_INV_ARG;
  va_list ap;
  va_start(ap, num_vars);
  for (int i = 0; i < num_vars; ++i) {
    void* dst = va_arg(ap, void*);
    auto it = config->values.find(i);
    if (it != config->values.end()) copy_out(it->second, dst);
  }
  va_end(ap);
  return ABT_SUCCESS;
}

int ABT_sched_config_free(ABT_sched_config* config) {
  if (!config || !*config) return ABT_ERR_INV_SCHED_CONFIG;
  delete *config;
  *config = ABT_SCHED_CONFIG_NULL;
  return ABT_SUCCESS;
}

int ABT_sched_config_set(ABT_sched_config config, int idx, ABT_sched_config_type type,
                         const void* val) {
  if (!config) return ABT_ERR_INV_SCHED_CONFIG;
  if (!valid_type(type)) return ABT_ERR_INV_ARG;
  return abt::guarded(ABT_ERR_MEM, [&] {
    set_value(config->values, idx, type, val);
    return ABT_SUCCESS;
  });
}

int ABT_sched_config_get(ABT_sched_config config, int idx, ABT_sched_config_type* p_type,
                         void* val) {
  if (!config) return ABT_ERR_INV_SCHED_CONFIG;
  auto it = config->values.find(idx);
  if (it == config->values.end()) return ABT_ERR_INV_ARG;
  if (p_type) *p_type = static_cast<ABT_sched_config_type>(it->second.type);
  copy_out(it->second, val);
  return ABT_SUCCESS;
}

int ABT_pool_config_create(ABT_pool_config* config) {
  if (!config) return ABT_ERR_INV_ARG;
  auto* c = new (std::nothrow) ABT_pool_config_opaque;
  if (!c) return ABT_ERR_MEM;
  *config = c;
  return ABT_SUCCESS;
}

int ABT_pool_config_free(ABT_pool_config* config) {
  if (!config || !*config) return ABT_ERR_INV_POOL_CONFIG;
  delete *config;
  *config = ABT_POOL_CONFIG_NULL;
  return ABT_SUCCESS;
}

int ABT_pool_config_set(ABT_pool_config config, int key, ABT_pool_config_type type,
                        const void* val) {
  if (!config) return ABT_ERR_INV_POOL_CONFIG;
  if (!valid_type(type)) return ABT_ERR_INV_ARG;
  return abt::guarded(ABT_ERR_MEM, [&] {
    set_value(config->values, key, type, val);
    return ABT_SUCCESS;
  });
}

int ABT_pool_config_get(ABT_pool_config config, int key, ABT_pool_config_type* p_type, void* val) {
  if (!config) return ABT_ERR_INV_POOL_CONFIG;
  auto it = config->values.find(key);
  if (it == config->values.end()) return ABT_ERR_INV_ARG;
  if (p_type) *p_type = static_cast<ABT_pool_config_type>(it->second.type);
  copy_out(it->second, val);
  return ABT_SUCCESS;
}

}  // extern "C"
