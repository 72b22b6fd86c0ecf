// The speed of a network interface as the kernel reports it in sysfs
// (<sys_class>/net/<ifname>/speed, in Mbit/s), for the planner's link figures. Every
// value that is not a plain positive number is "unknown": virtual devices report -1 or
// refuse the read (EINVAL on a veth that is down), some have no speed file at all, and
// the file may hold anything in a container that fakes /sys. Nothing here fails loudly:
// an unknown speed only means the planner keeps its default.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace weft::net {

// Where sysfs keeps its classes; tests point the functions below at a fake tree.
inline constexpr const char* kSysClassDir = "/sys/class";

// The Mbit/s in the text of a speed file ("10000\n"): digits, optionally surrounded by
// whitespace, greater than zero and at most 10^9 (a petabit; anything larger is garbage).
// nullopt for everything else ("-1", "", "fast", "1e4", "10000 Mb/s").
std::optional<int64_t> ParseSysfsSpeedMbps(std::string_view text);

// Reads <sys_class>/net/<ifname>/speed. nullopt when the name cannot be an interface
// name (empty, ".", "..", contains '/'), the file is absent or unreadable, or its text
// is not a speed. Blocking (one small file read); safe from any thread.
std::optional<int64_t> ReadInterfaceSpeedMbps(const std::string& sys_class,
                                              const std::string& ifname);

}  // namespace weft::net
