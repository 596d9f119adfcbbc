# Sourced by the client scripts here: installs every version .ci/clients pins for one client,
# each into /opt/teammem-clients/<client>-<version> of its own, and reinstalls a version whose
# installed package.json says otherwise (a half-finished or hand-changed install).
# (Not named *.sh, so .ci/run does not run it on its own.)

install_npm_client() {
  local client=$1 line package versions version prefix pkg have
  line=$(grep -E "^$client[[:space:]]" "$(dirname "${BASH_SOURCE[0]}")/../clients") || {
    echo "no pin for $client in .ci/clients" >&2; return 1; }
  package=$(awk '{print $2}' <<<"$line")
  versions=$(cut -d' ' -f3- <<<"$(tr -s ' \t' ' ' <<<"$line")")
  command -v npm >/dev/null || { echo "npm is required to install $package" >&2; return 1; }
  for version in $versions; do
    prefix=/opt/teammem-clients/$client-$version
    pkg=$prefix/node_modules/$package/package.json
    have=$(node -p "require('$pkg').version" 2>/dev/null || true)
    if [ "$have" = "$version" ]; then
      continue
    fi
    echo "installing $package@$version into $prefix (found: ${have:-nothing})"
    rm -rf "$prefix"
    mkdir -p "$prefix"
    npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error "$package@$version"
    have=$(node -p "require('$pkg').version")
    [ "$have" = "$version" ] || { echo "$package: installed $have, wanted $version" >&2; return 1; }
  done
}
