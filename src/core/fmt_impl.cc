// fmt's implementation, compiled once for all of weft.
//
// weft includes fmt's headers without FMT_HEADER_ONLY, which would compile fmt's whole
// implementation (format-inl.h) into every file that formats: 6-7 s of each such file's
// 8-14 s under ASan, measured 2026-12-07 on this 2-core VM (tcp_setup.cc 13.8 -> 7.7 s).
// Debian's libfmt-dev ships only the shared library, and libweft stays free of a runtime
// dependency on it, so the definitions are built here, into the core layer, hidden
// like the rest of weft's internals (-fvisibility=hidden, cmake/weft.map).
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

// The templates format.h declares but does not define outside header-only mode.
template auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
template auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template auto decimal_point_impl(locale_ref) -> char;
template locale_ref::locale_ref(const std::locale& loc);
template auto locale_ref::get<std::locale>() const -> std::locale;

}  // namespace detail
FMT_END_NAMESPACE
