// Decode-shaped attention calls seen as prefill-shaped ones (plain C++: used by the launcher,
// unit-tested on the CPU against attention_reference).
//
// Few query rows per head (decode): the `group` query heads that share a kv head become one head
// of group * Sq rows,
//   q [B, Hq, Sq, D]  ->  q' [B, Hkv, group * Sq, D],   row i * Sq + s of head g' = q[b, g'*group +
//   i, s]
// so one CTA reads each K/V tile once for the whole group and the 128-row query tiles fill
// (Llama-3-8B decode, group 4, Sq 1: a quarter of the K/V bytes and of the CTAs). The rows of the
// packed head need one stride: Sq == 1, or the group's heads back to back (head stride ==
// Sq * row stride, as in a contiguous [B, H, S, D]). The causal mask compares a row's position
// with the key's, which packing changes, so causal calls are left alone.
#pragma once

#include <cstdint>

#include "attention/attention.hpp"

namespace ts::kernels {

/// Rewrites `a` into its packed form and returns true, or leaves it and returns false.
inline bool pack_query_groups(AttentionArgs& a) {
  if (a.Hkv <= 0 || a.Hq % a.Hkv != 0) return false;
  const std::int64_t group = a.Hq / a.Hkv;
  if (a.is_causal || group == 1 || a.Sq >= 128) return false;
  auto row_stride = [&](const std::int64_t(&s)[4]) -> std::int64_t {
    if (a.Sq == 1) return s[1];
    return s[1] == a.Sq * s[2] ? s[2] : 0;
  };
  const std::int64_t q_row = row_stride(a.q_strides), o_row = row_stride(a.o_strides);
  if (q_row == 0 || o_row == 0) return false;
  a.q_strides[1] *= group;
  a.q_strides[2] = q_row;
  a.o_strides[1] *= group;
  a.o_strides[2] = o_row;
  a.Sq *= group;
  a.Hq = a.Hkv;
  return true;
}

}  // namespace ts::kernels
