// The endpoint (ofi_endpoint.h); its provider and domain come from provider.h.
#include "transport/ofi/ofi_endpoint.h"

#include <fmt/format.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstring>

#include "core/env.h"
#include "core/log.h"
#include "transport/ofi/fabric_lib.h"
#include "transport/ofi/ofi_link.h"

namespace weft::transport::ofi {
namespace {

// Staging buffers allocated (and registered) together.
constexpr size_t kSlabBuffers = 32;
// Completions read per fi_cq_read call.
constexpr int kCqBatch = 16;

}  // namespace

std::string OfiEndpoint::domain() const {
  const char* name = info_->domain_attr ? info_->domain_attr->name : nullptr;
  return name ? name : "?";
}

int64_t OfiEndpoint::nic_speed_mbps() const {
  // Bits per second; providers that do not know leave the nic (or its speed) unset.
  const fid_nic* nic = info_->nic;
  if (nic == nullptr || nic->link_attr == nullptr || nic->link_attr->speed == 0) return -1;
  const int64_t mbps = static_cast<int64_t>(nic->link_attr->speed / 1000000);
  return mbps > 0 ? mbps : -1;
}

Result<std::shared_ptr<OfiEndpoint>> OfiEndpoint::Open(int rank, const OpenOptions& options) {
  WEFT_ASSIGN_OR_RETURN(std::shared_ptr<const ProviderOffer> offer,
                        ProviderOffer::Find(rank, options));
  return Open(rank, *offer, options.local_index);
}

Result<std::shared_ptr<OfiEndpoint>> OfiEndpoint::Open(int rank, const ProviderOffer& offer,
                                                       int local_index) {
  WEFT_ASSIGN_OR_RETURN(FiInfoPtr info, offer.PickDomain(rank, local_index));
  std::shared_ptr<OfiEndpoint> e(new OfiEndpoint());
  e->rank_ = rank;
  e->info_ = info.release();
  e->provider_ = e->info_->fabric_attr->prov_name ? e->info_->fabric_attr->prov_name : "?";
  e->limits_ = LimitsFor(e->info_);
  Result<long long> prepost = GetEnvInt("WEFT_OFI_PREPOST", e->limits_.prepost_payload ? 1 : 0);
  if (!prepost.ok()) return prepost.status();
  e->limits_.prepost_payload = prepost.value() != 0;
  e->limits_.recv_iov = e->limits_.prepost_payload && e->info_->rx_attr->iov_limit >= 2;
  TuneProvider(e->provider_);
  Result<long long> force_mr = GetEnvInt("WEFT_OFI_MR", 0);
  if (!force_mr.ok()) return force_mr.status();
  e->register_ = (e->info_->domain_attr->mr_mode & FI_MR_LOCAL) != 0 || force_mr.value() != 0;
  // Registering a small user buffer per send costs more than copying it into the staging
  // buffer, which is registered once.
  if (e->register_) e->limits_.send_iov = false;
  WEFT_ASSIGN_OR_RETURN(e->limits_.eager_bytes,
                        EagerOffer(e->limits_, e->info_->ep_attr->max_msg_size, rank));
  if (e->limits_.recv_iov && !e->register_ && e->info_->rx_attr->iov_limit >= 3 &&
      e->limits_.eager_bytes > 0) {
    // Room for all a peer's eager message can carry past a smaller expected one. Not
    // value-initialised: its pages stay untouched unless a mismatched call lands there.
    e->sink_bytes_ = e->limits_.eager_bytes;
    e->sink_.reset(new uint8_t[e->sink_bytes_]);
  }

  auto fail = [&](const char* what, int ret) {
    return Unavailable(fmt::format("rank {}: ofi ({}): {}", rank, e->provider_, FiError(what, ret)));
  };
  int ret = Fabric().fabric(e->info_->fabric_attr, &e->fabric_, nullptr);
  if (ret) return fail("fi_fabric", ret);
  ret = fi_domain(e->fabric_, e->info_, &e->domain_, nullptr);
  if (ret) return fail("fi_domain", ret);
  fi_av_attr av_attr{};
  av_attr.type = FI_AV_TABLE;
  ret = fi_av_open(e->domain_, &av_attr, &e->av_, nullptr);
  if (ret) return fail("fi_av_open", ret);
  WEFT_RETURN_IF_ERROR(e->OpenCompletionQueue());
  ret = fi_endpoint(e->domain_, e->info_, &e->ep_, nullptr);
  if (ret) return fail("fi_endpoint", ret);
  ret = fi_ep_bind(e->ep_, &e->av_->fid, 0);
  if (ret) return fail("fi_ep_bind(av)", ret);
  ret = fi_ep_bind(e->ep_, &e->cq_->fid, FI_TRANSMIT | FI_RECV);
  if (ret) return fail("fi_ep_bind(cq)", ret);
  ret = fi_enable(e->ep_);
  if (ret) return fail("fi_enable", ret);
  size_t len = 0;
  ret = fi_getname(&e->ep_->fid, nullptr, &len);
  if (ret != -FI_ETOOSMALL && ret != 0) return fail("fi_getname", ret);
  e->address_.resize(len);
  ret = fi_getname(&e->ep_->fid, e->address_.data(), &len);
  if (ret) return fail("fi_getname", ret);
  e->address_.resize(len);
  WEFT_INFO("rank {}: ofi provider {} (domain {}), eager up to {} B, chunk {} B{}{}{}", rank,
            e->provider_, e->info_->domain_attr->name ? e->info_->domain_attr->name : "?",
            e->limits_.eager_bytes, e->limits_.max_chunk,
            e->limits_.recv_iov ? ", eager payloads received in place" : "",
            e->register_ ? ", registering buffers" : "",
            e->wait_fd_ >= 0 ? ", completion queue fd" : ", no completion queue fd");
  return e;
}

Status OfiEndpoint::OpenCompletionQueue() {
  Result<long long> want_fd = GetEnvInt("WEFT_OFI_WAIT_FD", 1);
  if (!want_fd.ok()) return want_fd.status();
  fi_cq_attr attr{};
  attr.format = FI_CQ_FORMAT_TAGGED;
  if (want_fd.value() != 0) {
    // A file descriptor to sleep on, so that idle ranks leave the core to the ones with
    // work. A provider that cannot give one (or gives no fd for it) is polled by hand.
    attr.wait_obj = FI_WAIT_FD;
    int ret = fi_cq_open(domain_, &attr, &cq_, nullptr);
    if (ret == 0) {
      int fd = -1;
      ret = fi_control(&cq_->fid, FI_GETWAIT, &fd);
      if (ret == 0 && fd >= 0) {
        wait_fd_ = fd;
        return Status::Ok();
      }
      fi_close(&cq_->fid);
      cq_ = nullptr;
    }
    WEFT_INFO("rank {}: ofi ({}): no file descriptor for the completion queue ({}); idle "
              "ranks poll it instead", rank_, provider_, FiError("FI_WAIT_FD", ret));
  }
  attr.wait_obj = FI_WAIT_NONE;
  int ret = fi_cq_open(domain_, &attr, &cq_, nullptr);
  if (ret)
    return Unavailable(
        fmt::format("rank {}: ofi ({}): {}", rank_, provider_, FiError("fi_cq_open", ret)));
  return Status::Ok();
}

int OfiEndpoint::WaitFd() {
  if (wait_fd_ < 0) return -1;
  fid* fids[1] = {&cq_->fid};
  return fi_trywait(fabric_, fids, 1) == FI_SUCCESS ? wait_fd_ : -1;
}

OfiEndpoint::~OfiEndpoint() {
  // Endpoint first: nothing completes into the CQ afterwards.
  if (ep_) fi_close(&ep_->fid);
  for (auto& r : requests_)
    if (r->mr) fi_close(&r->mr->fid);
  for (Slab& s : slabs_)
    if (s.mr) fi_close(&s.mr->fid);
  if (cq_) fi_close(&cq_->fid);
  if (av_) fi_close(&av_->fid);
  if (domain_) fi_close(&domain_->fid);
  if (fabric_) fi_close(&fabric_->fid);
  if (info_) Fabric().freeinfo(info_);
}

Status OfiEndpoint::InsertPeers(const std::vector<std::vector<uint8_t>>& addrs) {
  peer_addrs_.assign(addrs.size(), FI_ADDR_UNSPEC);
  for (size_t r = 0; r < addrs.size(); ++r) {
    if (static_cast<int>(r) == rank_) continue;
    int n = fi_av_insert(av_, addrs[r].data(), 1, &peer_addrs_[r], 0, nullptr);
    if (n != 1) {
      return Unavailable(fmt::format("rank {}: ofi ({}): inserting the address of rank {}: {}",
                                     rank_, provider_, r, FiError("fi_av_insert", n < 0 ? n : -FI_EINVAL)));
    }
  }
  return Status::Ok();
}

Request* OfiEndpoint::NewRequest(OfiLink* link, void* entry, int part) {
  Request* r;
  if (free_requests_.empty()) {
    requests_.push_back(std::make_unique<Request>());
    r = requests_.back().get();
  } else {
    r = free_requests_.back();
    free_requests_.pop_back();
  }
  std::memset(&r->ctx, 0, sizeof(r->ctx));
  r->link = link;
  r->entry = entry;
  r->part = part;
  r->mr = nullptr;
  return r;
}

void OfiEndpoint::Release(Request* r) {
  if (r->mr) fi_close(&r->mr->fid);
  r->mr = nullptr;
  r->link = nullptr;
  r->entry = nullptr;
  free_requests_.push_back(r);
}

Result<int> OfiEndpoint::Poll() {
  int handled = 0;
  while (true) {
    fi_cq_tagged_entry cqe[kCqBatch];
    ssize_t n = fi_cq_read(cq_, cqe, kCqBatch);
    if (n == -FI_EAGAIN) return handled;
    if (n == -FI_EAVAIL) {
      fi_cq_err_entry err{};
      ssize_t r = fi_cq_readerr(cq_, &err, 0);
      if (r < 0) {
        if (r == -FI_EAGAIN) continue;
        return Unavailable(fmt::format("rank {}: ofi ({}): {}", rank_, provider_,
                                       FiError("fi_cq_readerr", static_cast<int>(r))));
      }
      Request* req = static_cast<Request*>(err.op_context);
      std::string why = fmt::format(
          "{} ({}){}{}", Fabric().strerror(err.err), err.err,
          err.prov_errno ? fmt::format(", provider: {}", fi_cq_strerror(cq_, err.prov_errno,
                                                                       err.err_data, nullptr, 0))
                         : "",
          err.err == FI_ETRUNC ? " (the peer sent a larger message than expected)" : "");
      if (req == nullptr)
        return Unavailable(fmt::format("rank {}: ofi ({}): completion error: {}", rank_,
                                       provider_, why));
      if (req->link) req->link->OnError(req, err.err, why);
      Release(req);
      ++handled;
      continue;
    }
    if (n < 0)
      return Unavailable(fmt::format("rank {}: ofi ({}): {}", rank_, provider_,
                                     FiError("fi_cq_read", static_cast<int>(n))));
    for (ssize_t i = 0; i < n; ++i) {
      Request* req = static_cast<Request*>(cqe[i].op_context);
      if (req == nullptr) continue;
      if (req->link) req->link->OnComplete(req, cqe[i].len);
      Release(req);
      ++handled;
    }
  }
}

Result<fid_mr*> OfiEndpoint::Register(const void* ptr, size_t len) {
  // Without FI_MR_PROV_KEY the application picks the keys, unique per domain.
  uint64_t key = (info_->domain_attr->mr_mode & FI_MR_PROV_KEY) ? 0 : next_key_++;
  fid_mr* mr = nullptr;
  int ret = fi_mr_reg(domain_, ptr, len, FI_SEND | FI_RECV, 0, key, 0, &mr, nullptr);
  if (ret)
    return Unavailable(fmt::format("rank {}: ofi ({}): registering {} bytes: {}", rank_, provider_,
                                   len, FiError("fi_mr_reg", ret)));
  return mr;
}

Result<void*> OfiEndpoint::RegisterFor(Request* req, const void* ptr, size_t len) {
  if (!register_ || len == 0) return nullptr;
  WEFT_ASSIGN_OR_RETURN(req->mr, Register(ptr, len));
  return fi_mr_desc(req->mr);
}

Result<Staging> OfiEndpoint::AcquireStaging() {
  if (free_staging_.empty()) {
    size_t each = (staging_bytes() + 63) / 64 * 64;
    Slab slab;
    slab.bytes.reset(new uint8_t[each * kSlabBuffers]);
    void* desc = nullptr;
    if (register_) {
      Result<fid_mr*> mr = Register(slab.bytes.get(), each * kSlabBuffers);
      if (!mr.ok()) return mr.status().WithContext("staging buffers");
      slab.mr = mr.value();
      desc = fi_mr_desc(slab.mr);
    }
    for (size_t i = 0; i < kSlabBuffers; ++i)
      free_staging_.push_back(Staging{slab.bytes.get() + i * each, desc});
    slabs_.push_back(std::move(slab));
  }
  Staging s = free_staging_.back();
  free_staging_.pop_back();
  return s;
}

void OfiEndpoint::ReleaseStaging(Staging s) {
  if (s.data) free_staging_.push_back(s);
}

}  // namespace weft::transport::ofi