#ifndef CAPPLAN_TESTS_TEST_COMMON_TLS_CERTS_H_
#define CAPPLAN_TESTS_TEST_COMMON_TLS_CERTS_H_

// Throw-away certificates for TLS tests, made with the openssl command when
// the test runs (no private key is checked in): a CA, a server certificate
// for 127.0.0.1 and localhost, a client certificate from the same CA, and a
// second, unrelated CA with a client certificate of its own.

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/test_common/test_catalog.h"

namespace capplan::testing {

class TestCertificates {
 public:
  // False (with the command that failed in error()) when openssl is missing
  // or fails.
  bool Make() {
    return MakeCa("ca") && MakeCa("other-ca") &&
           MakeLeaf("server", "ca", "localhost",
                    "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n") &&
           MakeLeaf("client", "ca", "capplan-test-client", "extendedKeyUsage=clientAuth\n") &&
           MakeLeaf("other-client", "other-ca", "capplan-other-client",
                    "extendedKeyUsage=clientAuth\n");
  }

  // <name>.pem (certificate) and <name>.key (private key) in the folder.
  std::string Pem(const std::string& name) const { return Path(name + ".pem"); }
  std::string Key(const std::string& name) const { return Path(name + ".key"); }
  std::string Read(const std::string& file) const {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  const std::string& error() const { return error_; }

 private:
  std::string Path(const std::string& file) const { return (dir_.path() / file).string(); }

  bool Run(const std::string& command) {
    const std::string full = "cd '" + dir_.path().string() + "' && " + command + " 2>/dev/null";
    if (std::system(full.c_str()) == 0) return true;
    error_ = "failed: " + command;
    return false;
  }

  bool MakeCa(const std::string& name) {
    return Run(
        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
        "-days 2 -subj /CN=capplan-test-" +
        name + " -keyout " + name + ".key -out " + name + ".pem");
  }

  bool MakeLeaf(const std::string& name, const std::string& ca, const std::string& cn,
                const std::string& extensions) {
    dir_.Write(name + ".ext", "basicConstraints=CA:FALSE\n" + extensions);
    return Run("openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=" +
               cn + " -keyout " + name + ".key -out " + name + ".csr") &&
           Run("openssl x509 -req -in " + name + ".csr -CA " + ca + ".pem -CAkey " + ca +
               ".key -set_serial " + std::to_string(++serial_) + " -days 2 -extfile " + name +
               ".ext -out " + name + ".pem");
  }

  TempDir dir_;
  std::string error_;
  int serial_ = 1;
};

}  // namespace capplan::testing

#endif  // CAPPLAN_TESTS_TEST_COMMON_TLS_CERTS_H_
