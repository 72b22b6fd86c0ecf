#include "svg_to_png.h"

#include <cairo.h>
#include <librsvg/rsvg.h>

#include <cmath>
#include <memory>

namespace weft::sim::cli {
namespace {

struct SurfaceDeleter {
  void operator()(cairo_surface_t* s) const { cairo_surface_destroy(s); }
};
struct ContextDeleter {
  void operator()(cairo_t* c) const { cairo_destroy(c); }
};
struct HandleDeleter {
  void operator()(RsvgHandle* h) const { g_object_unref(h); }
};

// Takes a GError's message and frees it.
std::string Take(GError* error, const char* fallback) {
  if (error == nullptr) return fallback;
  std::string message = error->message;
  g_error_free(error);
  return message;
}

}  // namespace

std::string SvgToPng(const std::string& svg, int width, int height, double scale,
                     const std::string& path) {
  GError* error = nullptr;
  std::unique_ptr<RsvgHandle, HandleDeleter> handle(
      rsvg_handle_new_from_data(reinterpret_cast<const guint8*>(svg.data()), svg.size(), &error));
  if (!handle) return "librsvg cannot read the plot: " + Take(error, "unknown error");

  const int pw = static_cast<int>(std::lround(width * scale));
  const int ph = static_cast<int>(std::lround(height * scale));
  std::unique_ptr<cairo_surface_t, SurfaceDeleter> surface(
      cairo_image_surface_create(CAIRO_FORMAT_ARGB32, pw, ph));
  if (cairo_surface_status(surface.get()) != CAIRO_STATUS_SUCCESS)
    return cairo_status_to_string(cairo_surface_status(surface.get()));
  std::unique_ptr<cairo_t, ContextDeleter> cr(cairo_create(surface.get()));

  const RsvgRectangle viewport{0, 0, static_cast<double>(pw), static_cast<double>(ph)};
  if (!rsvg_handle_render_document(handle.get(), cr.get(), &viewport, &error))
    return "librsvg cannot render the plot: " + Take(error, "unknown error");
  cairo_surface_flush(surface.get());
  const cairo_status_t written = cairo_surface_write_to_png(surface.get(), path.c_str());
  if (written != CAIRO_STATUS_SUCCESS) return cairo_status_to_string(written);
  return "";
}

}  // namespace weft::sim::cli
