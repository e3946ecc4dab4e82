#include "fs/fuse/transport.h"

#include <string>

#include "base/file_util.h"

namespace mmfs::fs {

Result<Transport> ParseTransport(std::string_view word) {
  if (word == "auto") return Transport::kAuto;
  if (word == "uring" || word == "io_uring") return Transport::kUring;
  if (word == "classic") return Transport::kClassic;
  return Status::InvalidArgument("not a transport; the transports are auto, uring and classic");
}

KernelRingOffer ReadKernelRingOffer(const std::string& path) {
  KernelRingOffer offer;
  auto text = ReadWholeFile(path, 64);
  if (!text.ok()) {
    offer.why_not = "this kernel has no FUSE over io_uring (" + path +
                    " is missing; Linux 6.14 "
                    "or later built with CONFIG_FUSE_IO_URING has it)";
    return offer;
  }
  const std::string value = text->substr(0, text->find_first_of(" \n"));
  offer.offered = value == "Y" || value == "1";
  if (!offer.offered) {
    offer.why_not = "the kernel does not offer FUSE over io_uring to new mounts (" + path + " is " +
                    value + "; as root: echo Y > " + path + ")";
  }
  return offer;
}

Result<TransportChoice> ChooseTransport(Transport asked, bool library_has_ring,
                                        const KernelRingOffer& kernel, bool remote_origin) {
  static const std::string kNoLibrary =
      "this mmfs was built with a libfuse older than 3.18, which has no io_uring "
      "(tools/build-libfuse-uring.sh builds one it can use)";
  static const std::string kNotForUrls =
      "a dataset served from a URL is not served over io_uring: there a READ that waits on the "
      "network would hold every request from its CPU, cache hits included, for as long as the "
      "store takes to answer or fail (over /dev/fuse such READs wait on threads of their own); "
      "use -o transport=auto or classic";
  TransportChoice choice;
  switch (asked) {
    case Transport::kClassic:
      choice.why = "/dev/fuse, as asked (-o transport=classic)";
      return choice;
    case Transport::kUring:
      if (!library_has_ring) return Status::InvalidArgument(kNoLibrary);
      if (!kernel.offered) return Status::InvalidArgument(kernel.why_not);
      if (remote_origin) return Status::InvalidArgument(kNotForUrls);
      choice.ring = true;
      choice.why = "io_uring, as asked (-o transport=uring)";
      return choice;
    case Transport::kAuto:
      break;
  }
  if (!library_has_ring) {
    choice.why = "/dev/fuse: " + kNoLibrary;
  } else if (!kernel.offered) {
    choice.why = "/dev/fuse: " + kernel.why_not;
  } else if (remote_origin) {
    choice.why =
        "/dev/fuse: the dataset is served from a URL, and on the ring a READ waiting "
        "on the network would hold up every request from its CPU";
  } else {
    choice.ring = true;
    choice.why = "io_uring: the kernel and libfuse offer it (-o transport=classic turns it off)";
  }
  return choice;
}

}  // namespace mmfs::fs
