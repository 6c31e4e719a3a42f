#include "readyport/os_types.hpp"

namespace readyport {

const char* os_error_name(std::uint32_t code) {
  switch (code) {
    case kErrorSuccess:
      return "ERROR_SUCCESS";
    case kErrorInvalidHandle:
      return "ERROR_INVALID_HANDLE";
    case kErrorNotEnoughMemory:
      return "ERROR_NOT_ENOUGH_MEMORY";
    case kErrorInvalidParameter:
      return "ERROR_INVALID_PARAMETER";
    case kWaitIoCompletion:
      return "WAIT_IO_COMPLETION";
    case kWaitTimeout:
      return "WAIT_TIMEOUT";
    case kErrorAbandonedWait0:
      return "ERROR_ABANDONED_WAIT_0";
    case kErrorNoSystemResources:
      return "ERROR_NO_SYSTEM_RESOURCES";
    case kErrorTimeout:
      return "ERROR_TIMEOUT";
    case kWsaEintr:
      return "WSAEINTR";
    case kWsaEfault:
      return "WSAEFAULT";
    case kWsaEinval:
      return "WSAEINVAL";
    case kWsaEmfile:
      return "WSAEMFILE";
    case kWsaEwouldblock:
      return "WSAEWOULDBLOCK";
    case kWsaEinprogress:
      return "WSAEINPROGRESS";
    case kWsaEalready:
      return "WSAEALREADY";
    case kWsaEnotsock:
      return "WSAENOTSOCK";
    case kWsaEmsgsize:
      return "WSAEMSGSIZE";
    case kWsaEopnotsupp:
      return "WSAEOPNOTSUPP";
    case kWsaEafnosupport:
      return "WSAEAFNOSUPPORT";
    case kWsaEaddrinuse:
      return "WSAEADDRINUSE";
    case kWsaEaddrnotavail:
      return "WSAEADDRNOTAVAIL";
    case kWsaEconnaborted:
      return "WSAECONNABORTED";
    case kWsaEconnreset:
      return "WSAECONNRESET";
    case kWsaEnobufs:
      return "WSAENOBUFS";
    case kWsaEisconn:
      return "WSAEISCONN";
    case kWsaEnotconn:
      return "WSAENOTCONN";
    case kWsaEshutdown:
      return "WSAESHUTDOWN";
    case kWsaEconnrefused:
      return "WSAECONNREFUSED";
    default:
      return "error";
  }
}

}  // namespace readyport
