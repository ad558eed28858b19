#!/bin/bash
# electron-builder 26.17.0's after-install template (app-builder-lib/templates/linux), unchanged,
# then Tandem's AppArmor profile for bubblewrap at the end. Re-copy the upstream part when
# electron-builder is upgraded (tests/unit/launch.test.ts compares it).

if type update-alternatives >/dev/null 2>&1; then
    # Remove previous link if it doesn't use update-alternatives
    if [ -L '/usr/bin/${executable}' -a -e '/usr/bin/${executable}' -a "`readlink '/usr/bin/${executable}'`" != '/etc/alternatives/${executable}' ]; then
        rm -f '/usr/bin/${executable}'
    fi
    update-alternatives --install '/usr/bin/${executable}' '${executable}' '/opt/${sanitizedProductName}/${executable}' 100 || ln -sf '/opt/${sanitizedProductName}/${executable}' '/usr/bin/${executable}'
else
    ln -sf '/opt/${sanitizedProductName}/${executable}' '/usr/bin/${executable}'
fi

# Check if user namespaces are supported by the kernel and working with a quick test:
if ! { [[ -L /proc/self/ns/user ]] && unshare --user true; }; then
    # Use SUID chrome-sandbox only on systems without user namespaces:
    chmod 4755 '/opt/${sanitizedProductName}/chrome-sandbox' || true
else
    chmod 0755 '/opt/${sanitizedProductName}/chrome-sandbox' || true
fi

if hash update-mime-database 2>/dev/null; then
    update-mime-database /usr/share/mime || true
fi

if hash update-desktop-database 2>/dev/null; then
    update-desktop-database /usr/share/applications || true
fi

# Install apparmor profile. (Ubuntu 24+)
# First check if the version of AppArmor running on the device supports our profile.
# This is in order to keep backwards compatibility with Ubuntu 22.04 which does not support abi/4.0.
# In that case, we just skip installing the profile since the app runs fine without it on 22.04.
#
# Those apparmor_parser flags are akin to performing a dry run of loading a profile.
# https://wiki.debian.org/AppArmor/HowToUse#Dumping_profiles
#
# Unfortunately, at the moment AppArmor doesn't have a good story for backwards compatibility.
# https://askubuntu.com/questions/1517272/writing-a-backwards-compatible-apparmor-profile
if apparmor_status --enabled > /dev/null 2>&1; then
  APPARMOR_PROFILE_SOURCE='/opt/${sanitizedProductName}/resources/apparmor-profile'
  APPARMOR_PROFILE_TARGET='/etc/apparmor.d/${executable}'
  if apparmor_parser --skip-kernel-load --debug "$APPARMOR_PROFILE_SOURCE" > /dev/null 2>&1; then
    cp -f "$APPARMOR_PROFILE_SOURCE" "$APPARMOR_PROFILE_TARGET"

    # Updating the current AppArmor profile is not possible and probably not meaningful in a chroot'ed environment.
    # Use cases are for example environments where images for clients are maintained.
    # There, AppArmor might correctly be installed, but live updating makes no sense.
    if ! { [ -x '/usr/bin/ischroot' ] && /usr/bin/ischroot; } && hash apparmor_parser 2>/dev/null; then
      # Extra flags taken from dh_apparmor:
      # > By using '-W -T' we ensure that any abstraction updates are also pulled in.
      # https://wiki.debian.org/AppArmor/Contribute/FirstTimeProfileImport
      apparmor_parser --replace --write-cache --skip-read-cache "$APPARMOR_PROFILE_TARGET"
    fi
  else
    echo "Skipping the installation of the AppArmor profile as this version of AppArmor does not seem to support the bundled profile"
  fi
fi

# --- Tandem: bubblewrap's AppArmor profile ---
# Tandem confines agents' terminals with /usr/bin/bwrap. Ubuntu 24.04 (AppArmor 4,
# kernel.apparmor_restrict_unprivileged_userns=1) forbids unprivileged user namespaces to programs
# without a profile that allows "userns", so bubblewrap fails there ("setting up uid map:
# Permission denied"). The profile below is the one Ubuntu documents for such programs. It is
# not installed where another profile already attaches to /usr/bin/bwrap: two profiles for one
# path conflict, and AppArmor then applies neither.
TANDEM_BWRAP_PROFILE='/etc/apparmor.d/tandem-bwrap'
if apparmor_status --enabled > /dev/null 2>&1 && [ -x /usr/bin/bwrap ] && hash apparmor_parser 2>/dev/null; then
  if find /etc/apparmor.d -maxdepth 1 -type f ! -name tandem-bwrap -exec grep -l '/usr/bin/bwrap' {} + 2>/dev/null | grep -q .; then
    echo "Tandem: another AppArmor profile covers /usr/bin/bwrap already; not adding $TANDEM_BWRAP_PROFILE"
  else
    TANDEM_BWRAP_TMP="$(mktemp)"
    cat > "$TANDEM_BWRAP_TMP" <<'PROFILE'
# Installed by Tandem's package: lets bubblewrap create the user namespaces that confine agents'
# terminals under Ubuntu's unprivileged user namespace restriction.
abi <abi/4.0>,
include <tunables/global>

profile tandem-bwrap /usr/bin/bwrap flags=(unconfined) {
  userns,

  include if exists <local/tandem-bwrap>
}
PROFILE
    if apparmor_parser --skip-kernel-load --debug "$TANDEM_BWRAP_TMP" > /dev/null 2>&1; then
      install -m 0644 "$TANDEM_BWRAP_TMP" "$TANDEM_BWRAP_PROFILE"
      if ! { [ -x '/usr/bin/ischroot' ] && /usr/bin/ischroot; }; then
        apparmor_parser --replace --write-cache --skip-read-cache "$TANDEM_BWRAP_PROFILE" || true
      fi
    else
      echo "Tandem: this AppArmor does not take the bubblewrap profile (abi 4.0); not adding it"
    fi
    rm -f "$TANDEM_BWRAP_TMP"
  fi
fi
