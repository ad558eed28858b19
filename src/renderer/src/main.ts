import '@xterm/xterm/css/xterm.css';
import './styles/app.css';
import './styles/light.css';
import { mount } from 'svelte';
import App from './App.svelte';

const target = document.getElementById('app');
if (!target) throw new Error('index.html has no #app element to mount the UI into');

mount(App, { target });
