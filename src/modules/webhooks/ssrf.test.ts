import { describe, expect, test } from "bun:test";
import { blockedAddressReason, ipv6Groups, resolveTarget, UnsafeTargetError } from "./ssrf";

describe("blockedAddressReason", () => {
  test.each([
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["10.20.30.40", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.0.10", "private"],
    ["169.254.169.254", "link-local"],
    ["100.64.0.1", "CGNAT"],
    ["100.127.255.254", "CGNAT"],
    ["0.0.0.0", "unspecified"],
    ["224.0.0.251", "multicast"],
    ["255.255.255.255", "broadcast"],
    ["198.18.0.1", "benchmarking"],
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["fe80::1%eth0", "link-local"],
    ["fd00:ec2::254", "unique-local"],
    ["fc00::1", "unique-local"],
    ["ff02::1", "multicast"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:169.254.169.254", "link-local"],
    ["::10.0.0.1", "private"],
    ["64:ff9b::192.168.0.1", "private"],
    ["2002:c0a8:0001::1", "private"],
    ["::ffff:0:127.0.0.1", "loopback"],
    ["::ffff:0:a9fe:a9fe", "link-local"],
    ["64:ff9b:1::a00:1", "local-use NAT64"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"],
    ["[::1]", "loopback"],
  ])("%s is refused (%s)", (ip, why) => {
    expect(blockedAddressReason(ip)).toContain(why);
  });

  test.each(["8.8.8.8", "93.184.216.34", "172.32.0.1", "100.128.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "::ffff:0:8.8.8.8", "2002:0808:0808::1", "2001:4860:4860::8888"])("%s is public", (ip) => {
    expect(blockedAddressReason(ip)).toBeNull();
  });

  test("a name is not an address", () => {
    expect(blockedAddressReason("localhost")).toBe("not an IP address");
  });

  test("ipv6Groups expands :: and a dotted tail", () => {
    expect(ipv6Groups("::ffff:1.2.3.4")).toEqual([0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304]);
    expect(ipv6Groups("2001:db8::1")).toEqual([0x2001, 0xdb8, 0, 0, 0, 0, 0, 1]);
  });
});

describe("resolveTarget", () => {
  const resolve = async (host: string) => (host === "mixed.example" ? ["93.184.216.34", "10.0.0.1"] : host === "ok.example" ? ["93.184.216.34", "2606:4700::1"] : []);

  test("every resolved address must pass; a literal address is not resolved", async () => {
    expect(await resolveTarget(new URL("https://ok.example/x"), { allowPrivate: false, resolve })).toEqual(["93.184.216.34", "2606:4700::1"]);
    await expect(resolveTarget(new URL("https://mixed.example/x"), { allowPrivate: false, resolve })).rejects.toThrow("resolves to 10.0.0.1");
    await expect(resolveTarget(new URL("https://empty.example/x"), { allowPrivate: false, resolve })).rejects.toBeInstanceOf(UnsafeTargetError);
    await expect(resolveTarget(new URL("http://[::ffff:a9fe:a9fe]/"), { allowPrivate: false, resolve })).rejects.toThrow("link-local");
  });

  test("allowPrivate skips the check, not the resolution", async () => {
    expect(await resolveTarget(new URL("https://mixed.example/x"), { allowPrivate: true, resolve })).toEqual(["93.184.216.34", "10.0.0.1"]);
    expect(await resolveTarget(new URL("http://127.0.0.1:8080/"), { allowPrivate: true, resolve })).toEqual(["127.0.0.1"]);
  });
});
