/** A short, quiet tone for the audible bell (no sound file to ship). */
const toneHz = 660;
const toneMs = 90;

let context: AudioContext | null = null;

export function ringBell(): void {
  try {
    context ??= new AudioContext();
    const oscillator = context.createOscillator();
    const gain = context.createGain();
    oscillator.frequency.value = toneHz;
    gain.gain.setValueAtTime(0.08, context.currentTime);
    gain.gain.exponentialRampToValueAtTime(0.0001, context.currentTime + toneMs / 1000);
    oscillator.connect(gain).connect(context.destination);
    oscillator.start();
    oscillator.stop(context.currentTime + toneMs / 1000);
  } catch {
    // No audio output (or autoplay refused before any interaction): the bell stays silent.
  }
}
